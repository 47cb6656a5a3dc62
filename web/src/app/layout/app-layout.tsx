import { Suspense } from 'react';
import { Outlet, ScrollRestoration } from 'react-router';
import { PageSpinner } from '@/components/ui/spinner';
import { RealityCheckReminder } from '@/features/settings/components/reality-check';
import { Footer } from './footer';
import { Header } from './header';
import styles from './layout.module.css';
import { NavBar } from './nav-bar';

export function AppLayout() {
  return (
    <>
      <a href="#main" className={styles.skipLink}>
        Skip to content
      </a>
      <Header />
      <NavBar />
      <main id="main" className={styles.main} tabIndex={-1}>
        <Suspense fallback={<PageSpinner />}>
          <Outlet />
        </Suspense>
      </main>
      <Footer />
      <RealityCheckReminder />
      <ScrollRestoration />
    </>
  );
}
