#!/usr/bin/env bash
# make bench: measures Fairplay next to the database's own limit, on this
# machine. Starts the local Postgres and Redis, builds a release server,
# serves it on a fresh database with rate limits off, runs `pgbench -N` on the
# same Postgres at each concurrency level, then the load generator (test/load)
# over the scenarios at each level, and prints per scenario, operation and
# endpoint req/s, p50/p95/p99 and errors (with a sample message), the server's
# RSS (now and peak) and CPU, and the ratio of dice bets/s to pgbench
# transactions/s at as many clients. Results are written as JSON under
# .data/bench/ (bench-<time>.json).
# Settings:
#   BENCH_DURATION     each run's length (default 15s; whole seconds or minutes, e.g. 5s, 1m)
#   BENCH_CONCURRENCY  concurrency levels (default 32,64); pgbench runs with as many clients
#   BENCH_SCENARIOS    default login,user,dice,mix; also balance, plinko, keno, mines, blackjack, pump, and
#                      pwflood (other players' sign-in latency idle, then while one account floods
#                      change-password with as many parallel requests as the concurrency level)
#   BENCH_PORT         the server's port (default 18090; its metrics on BENCH_PORT+2, the profiler
#                      with BENCH_PROFILE on BENCH_PORT+1)
#   BENCH_COMPARE      an older .data/bench/bench-*.json: also print a before/after table (default: the
#                      previous run's, the newest bench-*.json there; "none" for no table)
#   BENCH_SERVER       a fairplay binary to measure instead of building this tree (an older version,
#                      for a before/after; it migrates its own fresh database)
#   BENCH_LABEL        the report's label (default: git describe of this tree)
#   BENCH_LIMITS       1: every player has loss and wager limits (day, week, month) far above what a run
#                      reaches, so each bet checks all six (the cost of responsible-gambling limits)
#   BENCH_WATCHERS     live bets streams (GET /api/live/bets) held open during the load (default 0)
#   BENCH_WATCHERS_AB  instead of the load: what this many open live bets streams cost the first scenario at
#                      the first level, runs without and with them alternating (BENCH_AB_ROUNDS pairs,
#                      default 3), medians compared (req/s, p99, server CPU per operation)
#   BENCH_LIVE_LATENCY measure the live feed's commit-to-stream latency over this many bets instead of the
#                      load (p50/p99; e.g. 300)
#   BENCH_PROFILE      a directory: Go's profiler is served on loopback and the first run's CPU profile
#                      (its middle seconds) and the allocations during it are written there (cpu.pprof,
#                      allocs.pprof) and their top entries printed (go tool pprof -top)
#   BENCH_SERVER_ENV   extra VAR=value words for the server's environment (say, what an older
#                      binary needs to run with its rate limits off)
#   BENCH_STANDBY      none (default: the primary alone), sync (a streaming standby named in
#                      synchronous_standby_names: each commit waits for its flush on the standby)
#                      or async (the standby, not waited for); see hack/services.sh. A list, e.g.
#                      none,sync, runs the bench once per mode (BENCH_SCENARIOS default dice) and
#                      prints each mode's dice bets/s and p99 next to the first's: the cost of
#                      synchronous commit
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DUR=${BENCH_DURATION:-15s}
CONC=${BENCH_CONCURRENCY:-32,64}
SCEN=${BENCH_SCENARIOS:-login,user,dice,mix}
PORT=${BENCH_PORT:-18090}
COMPARE=${BENCH_COMPARE-}
if [ -z "${BENCH_COMPARE+set}" ]; then
  # The previous run (the newest results file) is what this one is compared with.
  COMPARE=$(ls -t "$ROOT"/.data/bench/bench-*.json 2>/dev/null | head -1 || true)
fi
[ "$COMPARE" = none ] && COMPARE=
SERVER_BIN=${BENCH_SERVER:-}
read -r -a SERVER_ENV <<<"${BENCH_SERVER_ENV:-}"
STANDBY=${BENCH_STANDBY:-none}
OUT=$ROOT/.data/bench
mkdir -p "$OUT"
stamp=$(date -u +%Y%m%dT%H%M%SZ)

for m in ${STANDBY//,/ }; do
  case $m in none | sync | async) ;; *) echo "BENCH_STANDBY=$STANDBY: want none, sync or async, or a list such as none,sync" >&2; exit 2 ;; esac
done
if [[ $STANDBY == *,* ]]; then
  # One run per mode, then the table of the cost.
  [ -n "${BENCH_LIVE_LATENCY:-}" ] && { echo "BENCH_LIVE_LATENCY measures one mode: give BENCH_STANDBY one mode" >&2; exit 2; }
  results=()
  for m in ${STANDBY//,/ }; do
    echo "==> BENCH_STANDBY=$m"
    log=$(mktemp)
    BENCH_STANDBY=$m BENCH_SCENARIOS=${BENCH_SCENARIOS:-dice} BENCH_COMPARE= \
      BENCH_LABEL="${BENCH_LABEL:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)} standby=$m" \
      "$0" | tee "$log"
    results+=("$(sed -n 's/^results: \([^ ]*\) .*/\1/p' "$log" | tail -1)")
    rm -f "$log"
  done
  modes=(${STANDBY//,/ })
  echo
  echo "==> the cost of the standby: dice bets/s and p99 per mode"
  for i in "${!results[@]}"; do
    jq -r --arg m "${modes[$i]}" '.runs[] | select(.scenario == "dice")
      | "  standby \($m | . + "      " | .[:6])  dice  c=\(.concurrency)  \(.rps * 10 | round / 10) bets/s  p50 \(.p50_ms) ms  p99 \(.p99_ms) ms  errors \(.errors)"' "${results[$i]}"
  done
  for i in "${!results[@]}"; do
    [ "$i" -eq 0 ] && continue
    echo
    echo "==> ${modes[$i]} against ${modes[0]}"
    bin/fairplay-load -compare "${results[0]}" "${results[$i]}"
  done
  exit 0
fi

case $DUR in
  *[0-9]s) secs=${DUR%s} ;;
  *[0-9]m) secs=$(( ${DUR%m} * 60 )) ;;
  *) echo "BENCH_DURATION=$DUR: want whole seconds or minutes, e.g. 15s or 1m" >&2; exit 2 ;;
esac
[[ $secs =~ ^[0-9]+$ && $secs -gt 0 ]] || { echo "BENCH_DURATION=$DUR: want whole seconds or minutes" >&2; exit 2; }
if [ -n "$COMPARE" ] && [ ! -r "$COMPARE" ]; then echo "BENCH_COMPARE=$COMPARE: no such file" >&2; exit 2; fi
PROFILE=${BENCH_PROFILE:-}
DEBUG_PORT=$((PORT + 1))
METRICS_PORT=$((PORT + 2))
if [ -n "$PROFILE" ]; then mkdir -p "$PROFILE" && PROFILE=$(cd "$PROFILE" && pwd); fi
if [ -n "$SERVER_BIN" ] && [ ! -x "$SERVER_BIN" ]; then echo "BENCH_SERVER=$SERVER_BIN: not an executable" >&2; exit 2; fi

FAIRPLAY_PG_STANDBY=$STANDBY hack/services.sh start
eval "$(hack/services.sh env)"
SERVER_URL=${DATABASE_URL%/*}
# The URL's parameters (with a standby: target_session_attrs=read-write).
URL_PARAMS=${DATABASE_URL#*\?}
BENCH_DB=fairplay_bench
PGBENCH_DB=fairplay_pgbench
psql -q "$SERVER_URL/postgres" -c "DROP DATABASE IF EXISTS $BENCH_DB WITH (FORCE)" -c "CREATE DATABASE $BENCH_DB" \
  -c "DROP DATABASE IF EXISTS $PGBENCH_DB WITH (FORCE)" -c "CREATE DATABASE $PGBENCH_DB"
export DATABASE_URL="$SERVER_URL/$BENCH_DB?$URL_PARAMS"
if [ "$STANDBY" != none ]; then
  echo "==> with a standby ($STANDBY): $(psql -Atq "$SERVER_URL/postgres" -c "SELECT string_agg(application_name || ' ' || state || ' ' || sync_state, ', ') FROM pg_stat_replication")"
fi

if [ -n "$SERVER_BIN" ]; then
  echo "==> building the load generator (measuring the server $SERVER_BIN)"
  cp "$SERVER_BIN" bin/fairplay-bench
else
  echo "==> building release server and load generator"
  CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o bin/fairplay-bench ./cmd/fairplay
fi
go build -o bin/fairplay-load ./test/load
log=$OUT/server-$stamp.log
bin/fairplay-bench migrate >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
keys=$(mktemp -d)
bin/fairplay-bench keys generate --dir "$keys" >/dev/null

# Another bench (or anything) on the port would answer the readiness checks
# and the load in our server's place.
if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null || (exec 3<>"/dev/tcp/127.0.0.1/$METRICS_PORT") 2>/dev/null; then
  echo "BENCH_PORT=$PORT: something already listens there or on $METRICS_PORT (another bench?); choose another port" >&2
  exit 1
fi
FAIRPLAY_HTTP_ADDR=127.0.0.1:$PORT FAIRPLAY_METRICS_ADDR=127.0.0.1:$METRICS_PORT FAIRPLAY_SIGNING_KEYS_DIR=$keys FAIRPLAY_LOG_LEVEL=warn FAIRPLAY_DRAIN_DELAY=0s \
FAIRPLAY_RATE_LOGIN_IP=0 FAIRPLAY_RATE_LOGIN_ACCOUNT_IP=0 FAIRPLAY_RATE_LOGIN_ACCOUNT_FAILURES=0 FAIRPLAY_RATE_REGISTER_IP=0 \
FAIRPLAY_RATE_PASSWORD_USER=0 FAIRPLAY_RATE_PASSWORD_IP=0 FAIRPLAY_RATE_BETS_USER=0 FAIRPLAY_RATE_SESSION_IP=0 \
FAIRPLAY_STARTING_BALANCE=1000 FAIRPLAY_REDIS_PREFIX="bench$stamp:" FAIRPLAY_LIVE_MAX_WATCHERS_PER_IP=100000 \
FAIRPLAY_DEBUG_ADDR=${PROFILE:+127.0.0.1:$DEBUG_PORT} \
  env ${SERVER_ENV[@]+"${SERVER_ENV[@]}"} bin/fairplay-bench serve >>"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$keys"' EXIT
ready=
for _ in $(seq 150); do
  curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && { ready=1; break; }
  kill -0 "$server" 2>/dev/null || break
  sleep 0.1
done
[ -n "$ready" ] && kill -0 "$server" 2>/dev/null || { echo "the server did not become ready; its log:" >&2; tail -30 "$log" >&2; exit 1; }

# The postmaster, so Postgres' CPU per transaction and per request can be
# told: its own time, its exited children's (cutime, cstime) and its live
# children's.
pg_pid=$(head -1 "$(psql -Atq "$SERVER_URL/postgres" -c 'SHOW data_directory')/postmaster.pid" 2>/dev/null || echo 0)
pg_ticks() {
  [ "$pg_pid" -gt 0 ] 2>/dev/null || { echo 0; return; }
  local t c
  t=$(awk '{print $14+$15+$16+$17}' "/proc/$pg_pid/stat" 2>/dev/null || echo 0)
  for c in $(pgrep -P "$pg_pid"); do t=$((t + $(awk '{print $14+$15}' "/proc/$c/stat" 2>/dev/null || echo 0))); done
  echo "$t"
}

echo "==> pgbench -N (the database's own limit: same Postgres, same machine, same run; ${secs}s per level)"
pgbench -q -i -s 10 "$SERVER_URL/$PGBENCH_DB" >/dev/null 2>&1
pg=()
for c in ${CONC//,/ }; do
  t0=$(pg_ticks)
  out=$(pgbench -N -c "$c" -j 2 -T "$secs" "$SERVER_URL/$PGBENCH_DB" 2>/dev/null)
  # pgbench's backends exit after it does; their CPU reaches the postmaster's
  # once they are reaped.
  sleep 1
  t1=$(pg_ticks)
  tps=$(awk -F'= ' '/^tps/ {print $2+0; exit}' <<<"$out")
  n=$(awk '/actually processed/ {split($NF, a, "/"); print a[1]; exit}' <<<"$out")
  per=$(awk -v a="$t0" -v b="$t1" -v n="${n:-0}" -v hz="$(getconf CLK_TCK)" \
    'BEGIN {if (n > 0) printf "%.0f", (b - a) / hz * 1e6 / n; else print "?"}')
  printf 'pgbench -N -c %-4s %10.1f tps   (Postgres CPU %s µs per transaction)\n' "$c" "${tps:-0}" "$per"
  pg+=("$c=${tps:-0}")
done
pg_arg=$(IFS=,; echo "${pg[*]}")

echo "==> load (${DUR} per run; req/s counts a mines round or a blackjack hand once, http/s every request)"
result=$OUT/bench-$stamp.json
rc=0
if [ -n "${BENCH_LIVE_LATENCY:-}" ]; then
  bin/fairplay-load -url "http://127.0.0.1:$PORT" -users 1 -live-latency "$BENCH_LIVE_LATENCY"
  exit
fi
if [ -n "${BENCH_WATCHERS_AB:-}" ]; then
  bin/fairplay-load -url "http://127.0.0.1:$PORT" -scenario "$SCEN" -c "$CONC" -d "$DUR" -users 64 -server-pid "$server" \
    -watchers-ab "$BENCH_WATCHERS_AB" -ab-rounds "${BENCH_AB_ROUNDS:-3}"
  exit
fi
profiler=
loadlog=$(mktemp)
if [ -n "$PROFILE" ]; then
  # The first run's middle: once the players are registered (argon2 would
  # fill the profile), a second into the run, until two seconds before its
  # end. The allocations are the difference between two heap profiles.
  (
    for _ in $(seq 600); do grep -q '^registered' "$loadlog" && break; sleep 0.1; done
    sleep 1
    curl -fsS -o "$PROFILE/allocs-0.pprof" "http://127.0.0.1:$DEBUG_PORT/debug/pprof/allocs"
    curl -fsS -o "$PROFILE/cpu.pprof" "http://127.0.0.1:$DEBUG_PORT/debug/pprof/profile?seconds=$(( secs > 4 ? secs - 3 : 1 ))"
    curl -fsS -o "$PROFILE/allocs-1.pprof" "http://127.0.0.1:$DEBUG_PORT/debug/pprof/allocs"
  ) &
  profiler=$!
fi
bin/fairplay-load -url "http://127.0.0.1:$PORT" -scenario "$SCEN" -c "$CONC" -d "$DUR" -users 64 -watchers "${BENCH_WATCHERS:-0}" \
  ${BENCH_LIMITS:+-limits} -server-pid "$server" -postgres-pid "$pg_pid" -pgbench "$pg_arg" -label "${BENCH_LABEL:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}" \
  -server-metrics "http://127.0.0.1:$METRICS_PORT/metrics" -json "$result" > >(tee "$loadlog") || rc=$?
[ -s "$result" ] || exit "$((rc ? rc : 1))"
echo "results: $result (server log: $log)"
if [ -n "$profiler" ]; then
  wait "$profiler" || echo "bench: the profiler did not answer (profiles incomplete)" >&2
  echo
  echo "==> CPU profile of the first run ($PROFILE/cpu.pprof), top entries by own time"
  go tool pprof -top -nodecount=25 bin/fairplay-bench "$PROFILE/cpu.pprof" 2>/dev/null | sed -n '1,32p'
  echo
  echo "==> top entries by cumulative time"
  go tool pprof -top -cum -nodecount=30 bin/fairplay-bench "$PROFILE/cpu.pprof" 2>/dev/null | sed -n '6,36p'
  echo
  echo "==> allocations during it ($PROFILE/allocs-1.pprof -base allocs-0.pprof), by bytes"
  go tool pprof -top -sample_index=alloc_space -nodecount=20 -base "$PROFILE/allocs-0.pprof" bin/fairplay-bench "$PROFILE/allocs-1.pprof" 2>/dev/null | sed -n '1,27p'
  echo "==> by count"
  go tool pprof -top -sample_index=alloc_objects -nodecount=20 -base "$PROFILE/allocs-0.pprof" bin/fairplay-bench "$PROFILE/allocs-1.pprof" 2>/dev/null | sed -n '5,27p'
fi
rm -f "$loadlog"

if [ -n "$COMPARE" ]; then
  echo
  echo "==> before/after (before: $COMPARE)"
  bin/fairplay-load -compare "$COMPARE" "$result"
fi
if [ "$rc" -ne 0 ]; then
  echo "bench: requests failed (exit $rc); the figures above are not from a clean run" >&2
  exit "$rc"
fi
