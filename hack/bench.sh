#!/usr/bin/env bash
# make bench: measures Fairplay next to the database's own limit, on this
# machine. Starts the local Postgres and Redis, builds a release server,
# serves it on a fresh database with rate limits off, runs `pgbench -N` and
# the load generator (test/load) at several concurrency levels, and prints
# per-scenario req/s and latency percentiles, the server's RSS and CPU, and
# the ratio of dice bets/s to pgbench transactions/s. Results are also written
# as JSON under .data/bench/.
# Settings: BENCH_DURATION (default 15s), BENCH_CONCURRENCY (default 32,64),
# BENCH_SCENARIOS (default login,user,dice,mix), BENCH_PORT (default 18090).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DUR=${BENCH_DURATION:-15s}
CONC=${BENCH_CONCURRENCY:-32,64}
SCEN=${BENCH_SCENARIOS:-login,user,dice,mix}
PORT=${BENCH_PORT:-18090}
OUT=$ROOT/.data/bench
mkdir -p "$OUT"
stamp=$(date -u +%Y%m%dT%H%M%SZ)

hack/services.sh start
eval "$(hack/services.sh env)"
SERVER_URL=${DATABASE_URL%/*}
BENCH_DB=fairplay_bench
PGBENCH_DB=fairplay_pgbench
psql -q "$SERVER_URL/postgres" -c "DROP DATABASE IF EXISTS $BENCH_DB WITH (FORCE)" -c "CREATE DATABASE $BENCH_DB" \
  -c "DROP DATABASE IF EXISTS $PGBENCH_DB WITH (FORCE)" -c "CREATE DATABASE $PGBENCH_DB"
export DATABASE_URL="$SERVER_URL/$BENCH_DB?sslmode=disable"

echo "==> building release server"
CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o bin/fairplay-bench ./cmd/fairplay
go build -o bin/fairplay-load ./test/load
bin/fairplay-bench migrate >/dev/null 2>&1
keys=$(mktemp -d)
bin/fairplay-bench keys generate --dir "$keys" >/dev/null

FAIRPLAY_HTTP_ADDR=127.0.0.1:$PORT FAIRPLAY_SIGNING_KEYS_DIR=$keys FAIRPLAY_LOG_LEVEL=warn \
FAIRPLAY_RATE_LOGIN_IP=0 FAIRPLAY_RATE_LOGIN_USERNAME=0 FAIRPLAY_RATE_REGISTER_IP=0 FAIRPLAY_RATE_BETS_USER=0 \
FAIRPLAY_REDIS_PREFIX="bench$stamp:" GOGC=${GOGC:-100} \
  bin/fairplay-bench serve >"$OUT/server-$stamp.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$keys"' EXIT
for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break; sleep 0.1; done

cpu_ticks() { awk '{print $14+$15}' "/proc/$server/stat"; }
rss_mb() { awk '/^VmRSS/ {printf "%.1f", $2/1024}' "/proc/$server/status"; }
hwm_mb() { awk '/^VmHWM/ {printf "%.1f", $2/1024}' "/proc/$server/status"; }
HZ=$(getconf CLK_TCK)

echo "==> pgbench -N (the database's own limit, same machine, same run)"
pgbench -q -i -s 10 "$SERVER_URL/$PGBENCH_DB" >/dev/null 2>&1
pg_tps=$(pgbench -N -c 32 -j 2 -T "${DUR%s}" "$SERVER_URL/$PGBENCH_DB" 2>/dev/null | awk -F'= ' '/^tps/ {print $2+0; exit}')
echo "pgbench -N -c 32: ${pg_tps} tps"

echo "==> load (${DUR} per run)"
t0=$(cpu_ticks); start=$(date +%s.%N)
bin/fairplay-load -url "http://127.0.0.1:$PORT" -scenario "$SCEN" -c "$CONC" -d "$DUR" -users 64 -json "$OUT/load-$stamp.json"
t1=$(cpu_ticks); end=$(date +%s.%N)
cpu=$(awk -v a="$t0" -v b="$t1" -v s="$start" -v e="$end" -v hz="$HZ" 'BEGIN {printf "%.0f", 100*(b-a)/hz/(e-s)}')
echo "server: RSS now $(rss_mb) MB, peak $(hwm_mb) MB, CPU ${cpu}% of one core on average during the load"

dice_rps=$(python3 -c "
import json,sys
r=[x for x in json.load(open('$OUT/load-$stamp.json')) if x['scenario']=='dice' and x['concurrency']==32]
print(r[0]['rps'] if r else 0)")
ratio=$(python3 -c "print(f'{float($dice_rps)/float($pg_tps):.2f}' if float($pg_tps) else 'n/a')")
echo "dice bets/s at 32 players: $dice_rps   pgbench -N tps: $pg_tps   ratio: $ratio"
python3 - "$OUT/load-$stamp.json" "$OUT/bench-$stamp.json" <<PY
import json, sys
load = json.load(open(sys.argv[1]))
json.dump({"when": "$stamp", "pgbench_tps": float("$pg_tps"), "dice_rps_32": float("$dice_rps"),
           "ratio": "$ratio", "server_rss_peak_mb": float("$(hwm_mb)"), "server_cpu_percent": float("$cpu"),
           "runs": load}, open(sys.argv[2], "w"), indent=2)
print("results:", sys.argv[2])
PY
