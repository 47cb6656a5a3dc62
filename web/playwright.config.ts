// End-to-end tests (web/e2e/*.spec.ts) in Debian's Chromium against a running
// server: hack/e2e.sh builds the release server, starts it on a fresh database
// with an administrator and runs `npx playwright test` with E2E_BASE_URL,
// E2E_ADMIN_USER and E2E_ADMIN_PASSWORD set.
import { fileURLToPath } from 'node:url';
import { defineConfig, type ReporterDescription } from '@playwright/test';

const root = fileURLToPath(new URL('..', import.meta.url));
const ci = Boolean(process.env.CI);

// list for the terminal, JSON for hack/test-summary.py (`make test` counts every test), HTML only on request
// (E2E_HTML=1; never in CI).
const reporter: ReporterDescription[] = [['list'], ['json', { outputFile: `${root}.data/test/web-e2e.json` }]];
if (process.env.E2E_HTML === '1' && !ci)
  reporter.push(['html', { outputFolder: `${root}test/artifacts/e2e/report`, open: 'never' }]);

export default defineConfig({
  testDir: 'e2e',
  testMatch: '*.spec.ts',
  // Two cores run the server, Chromium and the runner: two workers, one spec file each (the tests of a file run in
  // order, several share a player). E2E_WORKERS overrides.
  workers: Number(process.env.E2E_WORKERS ?? 2),
  fullyParallel: false,
  // A flaky test is fixed, not retried.
  retries: 0,
  forbidOnly: ci,
  // Whole flows (six games, 50 live bets) per test; single waits use the expect timeout.
  timeout: 180_000,
  expect: { timeout: 15_000 },
  outputDir: `${root}test/artifacts/e2e/results`,
  reporter,
  use: {
    baseURL: process.env.E2E_BASE_URL,
    browserName: 'chromium',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic',
      ],
    },
    viewport: { width: 1280, height: 800 },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
});
