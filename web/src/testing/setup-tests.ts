import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { afterEach } from 'vitest';
import { toast } from '@/lib/toast';
import { clearTokens } from '@/lib/tokens';

// Lazy route and dialog chunks are transformed on first use, which can take a while.
configure({ asyncUtilTimeout: 5000 });

afterEach(() => {
  cleanup();
  toast.clear();
  clearTokens();
  window.sessionStorage.clear();
  window.localStorage.clear();
  document.cookie.split(';').forEach((c) => {
    const name = c.split('=')[0]?.trim();
    if (name) document.cookie = `${name}=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/`;
  });
});
