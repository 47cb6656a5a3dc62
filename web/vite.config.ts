import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath, URL } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
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

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

// The Go server sends no compressed bytes of its own (internal/server/spa.go):
// it picks name.br or name.gz, written here next to every text file of the
// build, by the request's Accept-Encoding. Compressing once at build time
// lets Brotli use its best (slowest) level. A sibling is written only when it
// is smaller than the file.
function precompress(): Plugin {
  const compressible = /\.(js|mjs|css|html|svg|json|txt|webmanifest)$/;
  return {
    name: 'fairplay:precompress',
    apply: 'build',
    async closeBundle() {
      const names = (await readdir(outDir, { recursive: true })).filter((name) => compressible.test(name));
      await Promise.all(
        names.map(async (name) => {
          const file = `${outDir}/${name}`;
          const data = await readFile(file);
          const [br, gz] = await Promise.all([
            brotli(data, {
              params: {
                [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MAX_QUALITY,
                [zlib.BROTLI_PARAM_SIZE_HINT]: data.length,
              },
            }),
            gzipAsync(data, { level: zlib.Z_BEST_COMPRESSION }),
          ]);
          await Promise.all([
            br.length < data.length ? writeFile(`${file}.br`, br) : undefined,
            gz.length < data.length ? writeFile(`${file}.gz`, gz) : undefined,
          ]);
        }),
      );
    },
  };
}

const backend = process.env.FAIRPLAY_BACKEND ?? 'http://localhost:8080';

export default defineConfig({
  plugins: [react(), cleanDistKeepingPlaceholder(), precompress()],
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
    // dist/.vite/manifest.json: the Go server reads it to preload each route's chunks (internal/server/spa.go).
    manifest: true,
  },
  test: {
    environment: 'jsdom',
    globals: true,
    setupFiles: ['./src/testing/setup-tests.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
    restoreMocks: true,
  },
});
