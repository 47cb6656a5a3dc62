import { lazy } from 'react';
import { createBrowserRouter, type RouteObject } from 'react-router';
import { RouteError } from '@/components/errors/route-error';
import { AppLayout } from './layout/app-layout';

// Every screen is its own chunk (React.lazy), so / loads only the shell and the home grid.
const Home = lazy(() => import('./routes/home'));
const Dice = lazy(() => import('./routes/games/dice'));
const Mines = lazy(() => import('./routes/games/mines'));
const Plinko = lazy(() => import('./routes/games/plinko'));
const Pump = lazy(() => import('./routes/games/pump'));
const Keno = lazy(() => import('./routes/games/keno'));
const Blackjack = lazy(() => import('./routes/games/blackjack'));
const Admin = lazy(() => import('./routes/admin'));
const Settings = lazy(() => import('./routes/settings'));
const Bets = lazy(() => import('./routes/bets'));
const NotFound = lazy(() => import('./routes/not-found'));

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
