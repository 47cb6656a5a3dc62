import { readdir, rm } from 'node:fs/promises';
import { fileURLToPath, URL } from 'node:url';
import react from '@vitejs/plugin-react';
import type { Plugin } from 'vite';
import { defineConfig } from 'vitest/config';

const outDir = fileURLToPath(new URL('./dist', import.meta.url));

// The Go binary embeds web/dist (web/embed.go), and dist/.keep must survive so
// `go build` works before the app is built. Vite's emptyOutDir would delete it,
// so the build empties dist itself and leaves .keep alone.
function cleanDistKeepingPlaceholder(): Plugin {
  return {
    name: 'fairplay:clean-dist',
    apply: 'build',
    async buildStart() {
      const entries = await readdir(outDir).catch(() => [] as string[]);
      await Promise.all(
        entries
          .filter((name) => name !== '.keep')
          .map((name) => rm(`${outDir}/${name}`, { recursive: true, force: true })),
      );
    },
  };
}

const backend = process.env.FAIRPLAY_BACKEND ?? 'http://localhost:8080';

export default defineConfig({
  plugins: [react(), cleanDistKeepingPlaceholder()],
  resolve: {
    alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) },
  },
  server: {
    proxy: {
      '/api': { target: backend, changeOrigin: false },
      '/fairplay.v1': { target: backend, changeOrigin: false },
    },
  },
  build: {
    outDir,
    emptyOutDir: false,
    target: 'es2022',
    sourcemap: false,
  },
  test: {
    environment: 'jsdom',
    globals: true,
    setupFiles: ['./src/testing/setup-tests.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
    restoreMocks: true,
  },
});
