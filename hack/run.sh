#!/usr/bin/env bash
# make run: build everything and serve it on http://localhost:8080 with the
# project's own Postgres and Redis (unless DATABASE_URL / REDIS_URL are set),
# a signing key under .data/keys and a development admin whose login is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
mkdir -p .data

if [ -z "${DATABASE_URL:-}" ] || [ -z "${REDIS_URL:-}" ]; then
  hack/services.sh start
  eval "$(hack/services.sh env | grep -E "$( [ -z "${DATABASE_URL:-}" ] && echo DATABASE_URL)|$( [ -z "${REDIS_URL:-}" ] && echo REDIS_URL)" || true)"
fi
export DATABASE_URL REDIS_URL
export FAIRPLAY_SIGNING_KEYS_DIR=${FAIRPLAY_SIGNING_KEYS_DIR:-$ROOT/.data/keys}
export FAIRPLAY_LOG_FORMAT=${FAIRPLAY_LOG_FORMAT:-text}
export FAIRPLAY_HTTP_ADDR=${FAIRPLAY_HTTP_ADDR:-:8080}
export FAIRPLAY_METRICS_ADDR=${FAIRPLAY_METRICS_ADDR:-127.0.0.1:9090}
# One process and no load balancer: Ctrl-C stops at once instead of draining
# for the production default of 10s.
export FAIRPLAY_DRAIN_DELAY=${FAIRPLAY_DRAIN_DELAY:-0s}

make --no-print-directory build

bin/fairplay migrate
bin/fairplay keys generate --dir "$FAIRPLAY_SIGNING_KEYS_DIR" --if-empty

if [ -z "${FAIRPLAY_ADMIN_PASSWORD:-}" ]; then
  if [ ! -s .data/admin-password ]; then
    head -c 12 /dev/urandom | base64 | tr -d '/+=' >.data/admin-password
    chmod 600 .data/admin-password
  fi
  FAIRPLAY_ADMIN_PASSWORD=$(cat .data/admin-password)
fi
export FAIRPLAY_ADMIN_PASSWORD
bin/fairplay admin create --username admin --if-missing --reset-password >/dev/null

port=${FAIRPLAY_HTTP_ADDR##*:}
cat <<MSG

  Fairplay is starting on http://localhost:${port}
  Metrics:            http://${FAIRPLAY_METRICS_ADDR}/metrics (internal listener, not the app's port)
  Development admin:  username admin   password ${FAIRPLAY_ADMIN_PASSWORD}
  Bot check:          development mode (the sign-in widget's checkbox)
  Stop with Ctrl-C. Local Postgres/Redis keep running: 'make services-stop' stops them.

MSG
exec bin/fairplay serve
