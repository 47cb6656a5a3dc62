// make bench-web: Lighthouse (mobile profile: Moto G Power emulation, simulated
// slow 4G and 4× CPU throttling) over every route of the app served by the
// release server (hack/bench-web.sh starts it like hack/e2e.sh does), in
// Debian's Chromium (CHROME_PATH, default /usr/bin/chromium). Prints per route
// the performance, accessibility and best-practices scores and FCP, TBT, LCP,
// CLS; writes the figures to .data/bench/lighthouse-<time>.json. Measures only.
// Environment: E2E_BASE_URL (the server), LIGHTHOUSE_RUNS (runs per route, the
// median is printed; default 1), LIGHTHOUSE_ROUTES (comma-separated paths),
// LIGHTHOUSE_REPORTS (set: also write every run's full Lighthouse report, with
// its diagnostics, next to the figures).
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';

const baseURL = process.env.E2E_BASE_URL;
if (!baseURL) {
  console.error('E2E_BASE_URL is required, e.g. E2E_BASE_URL=http://127.0.0.1:8080');
  process.exit(2);
}
const routes = (
  process.env.LIGHTHOUSE_ROUTES ??
  '/,/games/dice,/games/plinko,/games/mines,/games/pump,/games/keno,/games/blackjack,/bets,/settings,/admin,/no-such-page'
).split(',');
const runs = Number(process.env.LIGHTHOUSE_RUNS ?? 1);
const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = `${root}.data/bench`;
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const reportDir = process.env.LIGHTHOUSE_REPORTS ? `${dir}/lighthouse-${stamp}` : null;
if (reportDir) await mkdir(reportDir, { recursive: true });

const chrome = await chromeLauncher.launch({
  chromePath: process.env.CHROME_PATH ?? '/usr/bin/chromium',
  chromeFlags: [
    '--headless=new',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-quic',
  ],
});

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
};

// audit runs Lighthouse on route. A run whose trace came out broken (a
// runtime error such as NO_NAVSTART, which Lighthouse itself says to retry)
// is run again, up to three times in all.
async function audit(route) {
  for (let attempt = 1; ; attempt++) {
    const res = await lighthouse(`${baseURL}${route}`, {
      port: chrome.port,
      output: 'json',
      logLevel: 'error',
      onlyCategories: ['performance', 'accessibility', 'best-practices'],
    });
    if (!res) throw new Error(`lighthouse returned nothing for ${route}`);
    const { runtimeError } = res.lhr;
    if (!runtimeError) return res;
    if (attempt === 3) throw new Error(`${route}: ${runtimeError.code} ${runtimeError.message}`);
    console.error(`${route}: ${runtimeError.code}, running it again`);
  }
}

const results = [];
try {
  for (const route of routes) {
    const samples = [];
    for (let i = 0; i < runs; i++) {
      const res = await audit(route);
      const { categories, audits } = res.lhr;
      if (reportDir) {
        const slug = route.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '') || 'home';
        await writeFile(`${reportDir}/${slug}-${i + 1}.json`, res.report);
      }
      samples.push({
        performance: Math.round(categories.performance.score * 100),
        accessibility: Math.round(categories.accessibility.score * 100),
        bestPractices: Math.round(categories['best-practices'].score * 100),
        fcpMs: Math.round(audits['first-contentful-paint'].numericValue),
        tbtMs: Math.round(audits['total-blocking-time'].numericValue),
        lcpMs: Math.round(audits['largest-contentful-paint'].numericValue),
        cls: Number(audits['cumulative-layout-shift'].numericValue.toFixed(3)),
        failed: Object.values(audits)
          .filter((a) => a.score !== null && a.score < 0.9 && a.scoreDisplayMode === 'binary')
          .map((a) => a.id),
      });
    }
    const pick = (k) => median(samples.map((s) => s[k]));
    const row = {
      route,
      performance: pick('performance'),
      accessibility: pick('accessibility'),
      bestPractices: pick('bestPractices'),
      fcpMs: pick('fcpMs'),
      tbtMs: pick('tbtMs'),
      lcpMs: pick('lcpMs'),
      cls: pick('cls'),
      failedAudits: [...new Set(samples.flatMap((s) => s.failed))],
      runs: samples,
    };
    results.push(row);
    console.log(
      `${route.padEnd(16)} perf ${String(row.performance).padStart(3)}  a11y ${String(row.accessibility).padStart(3)}  ` +
        `best ${String(row.bestPractices).padStart(3)}  FCP ${String(row.fcpMs).padStart(5)} ms  ` +
        `TBT ${String(row.tbtMs).padStart(4)} ms  LCP ${String(row.lcpMs).padStart(5)} ms  CLS ${row.cls.toFixed(3)}` +
        (row.failedAudits.length ? `  (failed: ${row.failedAudits.join(', ')})` : ''),
    );
  }
} finally {
  await chrome.kill();
}
await mkdir(dir, { recursive: true });
const file = `${dir}/lighthouse-${stamp}.json`;
await writeFile(
  file,
  JSON.stringify({ profile: 'mobile (Lighthouse default)', chromium: await chromeVersion(), runs, results }, null, 2),
);
console.log(`written to ${file}${reportDir ? ` (full reports in ${reportDir})` : ''}`);

async function chromeVersion() {
  const { execFile } = await import('node:child_process');
  return new Promise((resolve) => {
    execFile(process.env.CHROME_PATH ?? '/usr/bin/chromium', ['--version'], (err, out) =>
      resolve(err ? 'unknown' : out.trim()),
    );
  });
}
