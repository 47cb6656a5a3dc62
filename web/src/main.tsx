import { startTransition, StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app';
import './index.css';

const root = document.getElementById('root');
if (!root) throw new Error('missing #root element');

// The first render is a transition: React renders the app in slices of a few
// milliseconds, yielding between them, instead of one long task that blocks
// the main thread on a slow phone (Lighthouse's Total Blocking Time).
startTransition(() => {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
});
