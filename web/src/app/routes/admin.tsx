import { Navigate } from 'react-router';
import { PageSpinner } from '@/components/ui/spinner';
import { AdminDashboard } from '@/features/admin/components/admin-dashboard';
import { useUser } from '@/lib/auth';

/** AdminRoute: administrators only; everyone else goes back to the home page. */
export default function AdminRoute() {
  const user = useUser();
  if (user.isPending) return <PageSpinner />;
  if (!user.data?.isAdmin) return <Navigate to="/" replace />;
  return (
    <>
      <title>Admin · Fairplay</title>
      <AdminDashboard />
    </>
  );
}
