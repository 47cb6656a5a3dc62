import { useEffect, useState } from 'react';
import { RouterProvider } from 'react-router/dom';
import { AppProvider } from './provider';
import { createAppRouter, preloadOnIntent } from './router';

export function App() {
  const [router] = useState(createAppRouter);
  useEffect(() => preloadOnIntent(), []);
  return (
    <AppProvider>
      <RouterProvider router={router} />
    </AppProvider>
  );
}
