#!/usr/bin/env bash
# End-to-end tests: the real server (release build with the web app
# embedded) on a fresh database, driven by Playwright in Debian's Chromium.
# Playwright Test runs every web/e2e/*.spec.ts (see the end of this file).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PORT=${E2E_PORT:-18095}
mkdir -p .data/test test/artifacts/e2e

if [ -z "${DATABASE_URL:-}" ] || [ -z "${REDIS_URL:-}" ]; then
  hack/services.sh start
  eval "$(hack/services.sh env)"
fi
# Debian's Chromium (Playwright downloads no browser here), and psql.
hack/apt.sh chromium:/usr/bin/chromium postgresql-client:psql

SERVER_URL=${DATABASE_URL%/*}
psql -q "$SERVER_URL/postgres" -c "DROP DATABASE IF EXISTS fairplay_e2e WITH (FORCE)" -c "CREATE DATABASE fairplay_e2e" >/dev/null
export DATABASE_URL="$SERVER_URL/fairplay_e2e?sslmode=disable"

hack/web.sh build >/dev/null
CGO_ENABLED=0 go build -trimpath -o bin/fairplay-e2e ./cmd/fairplay
bin/fairplay-e2e migrate >/dev/null 2>&1
keys=$(mktemp -d)
bin/fairplay-e2e keys generate --dir "$keys" >/dev/null
export E2E_ADMIN_USER=e2e_admin E2E_ADMIN_PASSWORD=E2e!admin1
FAIRPLAY_LOG_FORMAT=text bin/fairplay-e2e admin create --username "$E2E_ADMIN_USER" --password "$E2E_ADMIN_PASSWORD" >/dev/null

FAIRPLAY_HTTP_ADDR=127.0.0.1:$PORT FAIRPLAY_METRICS_ADDR=127.0.0.1:0 FAIRPLAY_SIGNING_KEYS_DIR=$keys FAIRPLAY_LOG_LEVEL=warn FAIRPLAY_DRAIN_DELAY=0s \
FAIRPLAY_RATE_LOGIN_IP=0 FAIRPLAY_RATE_LOGIN_ACCOUNT_IP=0 FAIRPLAY_RATE_LOGIN_ACCOUNT_FAILURES=0 FAIRPLAY_RATE_REGISTER_IP=0 \
FAIRPLAY_RATE_PASSWORD_USER=0 FAIRPLAY_RATE_PASSWORD_IP=0 FAIRPLAY_RATE_BETS_USER=0 FAIRPLAY_RATE_SESSION_IP=0 \
FAIRPLAY_LIVE_MAX_WATCHERS_PER_IP=100000 FAIRPLAY_REDIS_PREFIX="e2e$$:" bin/fairplay-e2e serve >.data/test/e2e-server.log 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$keys"' EXIT
for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break; sleep 0.1; done

export E2E_BASE_URL=http://127.0.0.1:$PORT
# Playwright Test (web/playwright.config.ts): results in .data/test/web-e2e.json (counted by hack/test-summary.py),
# documentation screenshots in test/artifacts/e2e/<suite>/, a trace zip and a screenshot of every failed test in
# test/artifacts/e2e/results/. E2E_ONLY=name[,name] runs only those suites (web/e2e/<name>.spec.ts);
# E2E_GREP=pattern only the tests whose title matches.
rm -f .data/test/web-e2e*.json
files=()
if [ -n "${E2E_ONLY:-}" ]; then
  IFS=, read -ra names <<<"$E2E_ONLY"
  for name in "${names[@]}"; do
    [ -f "web/e2e/$name.spec.ts" ] || { echo "E2E_ONLY: no suite web/e2e/$name.spec.ts" >&2; exit 2; }
    files+=("e2e/$name.spec.ts")
  done
fi
cd web
if [ -n "${E2E_COMMAND:-}" ]; then
  # Another client of the same server (hack/bench-web.sh: Lighthouse), run in web/.
  bash -c "$E2E_COMMAND"
  exit
fi
npx playwright test ${E2E_GREP:+--grep "$E2E_GREP"} "${files[@]}"
