#!/usr/bin/env bash
# Starts, stops or describes the project's own Postgres and Redis under .data/
# (non-default ports, so they never clash with system services).
#   hack/services.sh start   start both (initialising Postgres on first use)
#   hack/services.sh stop    stop what this script started (by PID file)
#   hack/services.sh env     print DATABASE_URL and REDIS_URL exports
# Ports: FAIRPLAY_PG_PORT (default 55432), FAIRPLAY_REDIS_PORT (default 56379).
#
# A primary and a streaming standby, for failover drills and `make bench`'s
# cost of synchronous commit:
#   FAIRPLAY_PG_STANDBY=sync hack/services.sh start    a standby cloned from the primary
#       (pg_basebackup -R, .data/postgres-standby, port FAIRPLAY_PG_STANDBY_PORT, default
#       55433), and synchronous_standby_names on the primary, so a commit is acknowledged
#       only once the standby has flushed it
#   FAIRPLAY_PG_STANDBY=async hack/services.sh start   the same standby, asynchronous
#   FAIRPLAY_PG_STANDBY=none, or unset                 the primary alone, as always: a running
#       standby is stopped and synchronous_standby_names cleared (a primary waiting for a
#       standby that is gone would block every commit)
# With a standby, `env` prints a DATABASE_URL naming both servers with
# target_session_attrs=read-write, so the server connects to whichever is the
# primary. The standby is cloned afresh at each start with a standby (it is
# a copy; nothing lives only there).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DATA=$ROOT/.data
# Ports: the defaults, unless a previous start recorded others in
# .data/services.env (it moves on to free ports when the defaults are taken by
# something that is not ours).
STATE=$DATA/services.env
PG_PORT=${FAIRPLAY_PG_PORT:-}
REDIS_PORT=${FAIRPLAY_REDIS_PORT:-}
STANDBY_PORT=${FAIRPLAY_PG_STANDBY_PORT:-}
RECORDED_PG_STANDBY=none
if [ -s "$STATE" ]; then
  # shellcheck disable=SC1090
  . "$STATE"
  PG_PORT=${FAIRPLAY_PG_PORT:-$RECORDED_PG_PORT}
  REDIS_PORT=${FAIRPLAY_REDIS_PORT:-$RECORDED_REDIS_PORT}
  STANDBY_PORT=${FAIRPLAY_PG_STANDBY_PORT:-${RECORDED_PG_STANDBY_PORT:-}}
fi
PG_PORT=${PG_PORT:-55432}
REDIS_PORT=${REDIS_PORT:-56379}
STANDBY_PORT=${STANDBY_PORT:-$((PG_PORT + 1))}
STANDBY_MODE=${FAIRPLAY_PG_STANDBY:-none}
case $STANDBY_MODE in
  sync | async | none) ;;
  *) echo "FAIRPLAY_PG_STANDBY=$STANDBY_MODE: want sync, async or none" >&2; exit 2 ;;
esac
# The standby's name in the primary's synchronous_standby_names (its
# application_name in primary_conninfo).
STANDBY_NAME=fairplay_standby

# A port is busy when something listens on it, or when any socket uses it as
# its local port: the defaults lie in Linux's ephemeral range, so a client
# connection (even one in TIME-WAIT) can hold one, and a server's bind then
# fails although nothing listens there.
port_busy() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
  command -v ss >/dev/null 2>&1 && [ -n "$(ss -Htan "sport = :$1" 2>/dev/null)" ]
}
free_port() {
  local p=$1
  while port_busy "$p"; do p=$((p + 1)); done
  echo "$p"
}
DB=fairplay
mkdir -p "$DATA"
# Postgres runs as the postgres user when we are root; if that user cannot
# reach .data (a checkout under /root, say), its files live in /var/tmp instead
# and .data/postgres links there.
pg_paths() {
  PGROOT=$DATA
  if [ "$(id -u)" -eq 0 ] && id postgres >/dev/null 2>&1 && ! runuser -u postgres -- test -x "$DATA" 2>/dev/null; then
    PGROOT=/var/tmp/fairplay-$(printf '%s' "$ROOT" | sha1sum | cut -c1-12)
    mkdir -p "$PGROOT"
    chmod 755 "$PGROOT"
    [ -e "$DATA/postgres" ] || ln -s "$PGROOT/postgres" "$DATA/postgres"
  fi
  PGDATA=$PGROOT/postgres
  STANDBY_DATA=$PGROOT/postgres-standby
}

pg_bin() {
  local d
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then pg_config --bindir; return; fi
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && { echo "$d"; return; }; done
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return; }
  return 1
}

ensure_installed() {
  local pkgs=(redis-server:redis-server)
  pg_bin >/dev/null || pkgs+=(postgresql)
  # Debian starts a cluster on install on some machines; ours runs on its own port, so it does not matter.
  hack/apt.sh "${pkgs[@]}"
}

# as_pg runs a Postgres binary; as root it runs as the postgres system user,
# because Postgres refuses to run as root.
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start_postgres() {
  local bin; bin=$(pg_bin)
  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    mkdir -p "$PGDATA"
    [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$PGDATA" && chmod 700 "$PGDATA"
    as_pg "$bin/initdb" -D "$PGDATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$PGROOT/initdb.log" 2>&1 \
      || { cat "$PGROOT/initdb.log" >&2; exit 1; }
  fi
  if as_pg "$bin/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then return 0; fi
  PG_PORT=$(free_port "$PG_PORT")
  mkdir -p "$PGROOT/run"; [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$PGROOT/run"
  touch "$PGROOT/postgres.log"; [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$PGROOT/postgres.log"
  as_pg "$bin/pg_ctl" -D "$PGDATA" -l "$PGROOT/postgres.log" -w -t 60 \
    -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -k $PGROOT/run -c max_connections=300 -c shared_buffers=256MB" start >/dev/null \
    || { tail -20 "$PGROOT/postgres.log" >&2; exit 1; }
  if ! "$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -Atqc "SELECT 1 FROM pg_database WHERE datname='$DB'" | grep -q 1; then
    "$bin/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres "$DB"
  fi
}

psql_primary() { "$(pg_bin)/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -Atqc "$1"; }

# set_sync sets the primary's synchronous_standby_names (ALTER SYSTEM, so it
# outlives restarts) and reloads; nothing is written when it already is so.
set_sync() {
  [ "$(psql_primary "SHOW synchronous_standby_names")" = "$1" ] && return 0
  psql_primary "ALTER SYSTEM SET synchronous_standby_names = '$1'" >/dev/null
  psql_primary "SELECT pg_reload_conf()" >/dev/null
}

stop_standby() {
  if [ -s "$STANDBY_DATA/postmaster.pid" ]; then as_pg "$(pg_bin)/pg_ctl" -D "$STANDBY_DATA" -m fast stop >/dev/null || true; fi
}

# start_standby clones the primary into $STANDBY_DATA (pg_basebackup -R: a
# standby.signal and primary_conninfo naming the primary with our
# application_name) and starts it, then waits until the primary sees it
# streaming.
start_standby() {
  local bin; bin=$(pg_bin)
  if as_pg "$bin/pg_ctl" -D "$STANDBY_DATA" status >/dev/null 2>&1; then return 0; fi
  rm -rf "$STANDBY_DATA"
  mkdir -p "$STANDBY_DATA"; chmod 700 "$STANDBY_DATA"
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$STANDBY_DATA"
  as_pg "$bin/pg_basebackup" -D "$STANDBY_DATA" -X stream -R -c fast \
    -d "host=127.0.0.1 port=$PG_PORT user=postgres application_name=$STANDBY_NAME" >"$PGROOT/basebackup.log" 2>&1 \
    || { cat "$PGROOT/basebackup.log" >&2; exit 1; }
  STANDBY_PORT=$(free_port "$STANDBY_PORT")
  [ "$STANDBY_PORT" = "$PG_PORT" ] && STANDBY_PORT=$(free_port $((PG_PORT + 1)))
  touch "$PGROOT/postgres-standby.log"; [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$PGROOT/postgres-standby.log"
  as_pg "$bin/pg_ctl" -D "$STANDBY_DATA" -l "$PGROOT/postgres-standby.log" -w -t 60 \
    -o "-p $STANDBY_PORT -c listen_addresses=127.0.0.1 -k $PGROOT/run -c max_connections=300 -c shared_buffers=256MB" start >/dev/null \
    || { tail -20 "$PGROOT/postgres-standby.log" >&2; exit 1; }
  local _
  for _ in $(seq 300); do
    [ "$(psql_primary "SELECT count(*) FROM pg_stat_replication WHERE application_name = '$STANDBY_NAME' AND state = 'streaming'")" = 1 ] && return 0
    sleep 0.1
  done
  echo "the standby does not stream from the primary; see $PGROOT/postgres-standby.log" >&2
  exit 1
}

# standby applies FAIRPLAY_PG_STANDBY: sync and async run the standby (sync
# naming it in synchronous_standby_names once it streams, so no commit waits
# for a standby still being cloned); none stops it and clears the setting
# when it is set (never writing it otherwise, so a plain start is what it
# always was).
standby() {
  case $STANDBY_MODE in
    sync) set_sync ""; start_standby; set_sync "$STANDBY_NAME" ;;
    async) set_sync ""; start_standby ;;
    none) stop_standby; set_sync "" ;;
  esac
}

start_redis() {
  mkdir -p "$DATA/redis"
  if [ -s "$DATA/redis.pid" ] && kill -0 "$(cat "$DATA/redis.pid")" 2>/dev/null; then return 0; fi
  local try
  # A port can still be taken between the check and the bind: then the next.
  for try in 1 2 3 4 5; do
    REDIS_PORT=$(free_port "$REDIS_PORT")
    : >"$DATA/redis.log"
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --daemonize yes --pidfile "$DATA/redis.pid" \
      --dir "$DATA/redis" --save "" --appendonly no --logfile "$DATA/redis.log"
    for _ in $(seq 50); do
      redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && return 0
      grep -q "Address already in use" "$DATA/redis.log" && break
      sleep 0.1
    done
    grep -q "Address already in use" "$DATA/redis.log" || break
    REDIS_PORT=$((REDIS_PORT + 1))
  done
  echo "redis did not start; see $DATA/redis.log" >&2
  exit 1
}

case "${1:-}" in
  start)
    ensure_installed
    pg_paths
    start_postgres
    standby
    start_redis
    printf 'RECORDED_PG_PORT=%s\nRECORDED_REDIS_PORT=%s\nRECORDED_PG_STANDBY=%s\nRECORDED_PG_STANDBY_PORT=%s\n' \
      "$PG_PORT" "$REDIS_PORT" "$STANDBY_MODE" "$STANDBY_PORT" >"$STATE"
    ;;
  stop)
    pg_paths
    stop_standby
    if [ -s "$PGDATA/postmaster.pid" ]; then as_pg "$(pg_bin)/pg_ctl" -D "$PGDATA" -m fast stop >/dev/null || true; fi
    if [ -s "$DATA/redis.pid" ]; then kill "$(cat "$DATA/redis.pid")" 2>/dev/null || true; rm -f "$DATA/redis.pid"; fi
    ;;
  env)
    if [ "$RECORDED_PG_STANDBY" != none ]; then
      # Both servers; each connection keeps the first that takes writes.
      echo "export DATABASE_URL='postgres://postgres@127.0.0.1:$PG_PORT,127.0.0.1:$STANDBY_PORT/$DB?sslmode=disable&target_session_attrs=read-write&connect_timeout=5'"
    else
      echo "export DATABASE_URL=postgres://postgres@127.0.0.1:$PG_PORT/$DB?sslmode=disable"
    fi
    echo "export REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0"
    ;;
  *)
    echo "usage: $0 start|stop|env" >&2
    exit 2
    ;;
esac
