#!/usr/bin/env bash
# make bench-web: Lighthouse (mobile profile) over every route of the release
# build, served the way hack/e2e.sh serves it (fresh database, Debian's
# Chromium via CHROME_PATH). Prints per route the performance, accessibility
# and best-practices scores and FCP, TBT, LCP, CLS (web/scripts/lighthouse.mjs);
# the figures go to .data/bench/lighthouse-<time>.json. Measures only.
# Settings: LIGHTHOUSE_RUNS (runs per route, median printed; default 1),
# LIGHTHOUSE_ROUTES (comma-separated paths), LIGHTHOUSE_REPORTS=1 (also keep
# every full Lighthouse report, diagnostics included), E2E_PORT (default 18095).
set -euo pipefail
cd "$(dirname "$0")/.."
export CHROME_PATH=${CHROME_PATH:-/usr/bin/chromium}
E2E_COMMAND="node scripts/lighthouse.mjs" exec hack/e2e.sh
