#!/usr/bin/env bash
# Web app steps used by the Makefile: deps (npm ci when the lock changed),
# build, test, lint.
set -euo pipefail
cd "$(dirname "$0")/../web"
deps() {
  local stamp=node_modules/.lock-stamp sum
  sum=$(sha256sum package-lock.json | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$sum" ]; then
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
    echo "$sum" >"$stamp"
  fi
}
case "${1:-}" in
  deps) deps ;;
  build) deps; npm run build ;;
  test) deps; npm run typecheck; npm test ;;
  lint) deps; npm run lint ;;
  *) echo "usage: $0 deps|build|test|lint" >&2; exit 2 ;;
esac
