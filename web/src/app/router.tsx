import { lazy } from 'react';
import { createBrowserRouter, type RouteObject } from 'react-router';
import { RouteError } from '@/components/errors/route-error';
import { AppLayout } from './layout/app-layout';

// Every screen is its own chunk (React.lazy), so / loads only the shell and the home grid.
// The server's page for a path preloads that screen's chunks (internal/server/spa.go), and
// pointing at or focusing a link to another screen starts loading its chunk (preloadRoute).
const screens = {
  '/': () => import('./routes/home'),
  '/games/dice': () => import('./routes/games/dice'),
  '/games/mines': () => import('./routes/games/mines'),
  '/games/plinko': () => import('./routes/games/plinko'),
  '/games/pump': () => import('./routes/games/pump'),
  '/games/keno': () => import('./routes/games/keno'),
  '/games/blackjack': () => import('./routes/games/blackjack'),
  '/admin': () => import('./routes/admin'),
  '/settings': () => import('./routes/settings'),
  '/bets': () => import('./routes/bets'),
} as const;

const Home = lazy(screens['/']);
const Dice = lazy(screens['/games/dice']);
const Mines = lazy(screens['/games/mines']);
const Plinko = lazy(screens['/games/plinko']);
const Pump = lazy(screens['/games/pump']);
const Keno = lazy(screens['/games/keno']);
const Blackjack = lazy(screens['/games/blackjack']);
const Admin = lazy(screens['/admin']);
const Settings = lazy(screens['/settings']);
const Bets = lazy(screens['/bets']);
const NotFound = lazy(() => import('./routes/not-found'));

/** preloadRoute starts loading the chunk of the screen at path, if it is one of the app's (a no-op otherwise). */
export function preloadRoute(path: string): void {
  if (Object.hasOwn(screens, path)) void screens[path as keyof typeof screens]().catch(() => undefined);
}

/**
 * preloadOnIntent makes pointing at or focusing a same-origin link load its screen's
 * chunk, so the click usually finds it there. It returns the function that stops it.
 */
export function preloadOnIntent(doc: Document = document): () => void {
  const onIntent = (event: Event) => {
    const link = event.target instanceof Element ? event.target.closest('a[href]') : null;
    if (!(link instanceof HTMLAnchorElement) || link.origin !== window.location.origin) return;
    preloadRoute(link.pathname);
  };
  doc.addEventListener('pointerover', onIntent, { passive: true });
  doc.addEventListener('focusin', onIntent);
  return () => {
    doc.removeEventListener('pointerover', onIntent);
    doc.removeEventListener('focusin', onIntent);
  };
}

export const routes: RouteObject[] = [
  {
    element: <AppLayout />,
    errorElement: <RouteError />,
    children: [
      {
        // A failing screen is replaced inside the layout, keeping header and navigation.
        errorElement: <RouteError />,
        children: [
          { index: true, element: <Home /> },
          { path: 'games/dice', element: <Dice /> },
          { path: 'games/mines', element: <Mines /> },
          { path: 'games/plinko', element: <Plinko /> },
          { path: 'games/pump', element: <Pump /> },
          { path: 'games/keno', element: <Keno /> },
          { path: 'games/blackjack', element: <Blackjack /> },
          { path: 'admin', element: <Admin /> },
          { path: 'settings', element: <Settings /> },
          { path: 'bets', element: <Bets /> },
          { path: '*', element: <NotFound /> },
        ],
      },
    ],
  },
];

export function createAppRouter() {
  return createBrowserRouter(routes);
}
