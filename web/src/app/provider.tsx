import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { Toaster } from '@/components/ui/toaster';
import { AuthProvider, userQueryKey } from '@/lib/auth';
import { makeQueryClient } from '@/lib/query-client';
import { hasSession } from '@/lib/tokens';

/**
 * appQueryClient is the app's own QueryClient. A tab without a session is a
 * guest from the start: the user query begins as null instead of pending, so
 * the first render already draws the header's buttons and the game, rather
 * than a placeholder and then, a tick later, everything again.
 */
function appQueryClient(): QueryClient {
  const client = makeQueryClient();
  if (!hasSession()) client.setQueryData(userQueryKey, null);
  return client;
}

export function AppProvider({ children, queryClient }: { children: ReactNode; queryClient?: QueryClient }) {
  const [client] = useState(() => queryClient ?? appQueryClient());
  return (
    <QueryClientProvider client={client}>
      <AuthProvider>
        {children}
        <Toaster />
      </AuthProvider>
    </QueryClientProvider>
  );
}
