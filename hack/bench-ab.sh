#!/usr/bin/env bash
# make bench-ab: two server builds compared by make bench on a machine whose
# speed drifts. On this kind of machine one build's dice bets/s at 64 players
# has spread from 12,101 to 17,074 in five runs within an hour (and pgbench -N
# by as much), so one run of each build cannot tell a 5% change from the
# noise. This runs hack/bench.sh for each build in turn, BENCH_AB_ROUNDS
# rounds in the order A B, B A, A B ... (so a steady drift falls on both
# alike), and prints each round's figures and, per round, B's over A's: a
# change is real when the paired ratios agree in sign.
#
#   BENCH_A=<git revision or fairplay binary> make bench-ab
#   BENCH_A=HEAD~1 BENCH_B=HEAD make bench-ab
#
#   BENCH_A           the baseline: a git revision (built from a clean export
#                     with this tree's web/dist, so only the server differs) or
#                     an executable
#   BENCH_B           the other side (default: this tree, as make bench builds it)
#   BENCH_AB_ROUNDS   rounds (default 4; each runs make bench once per build)
# Any other BENCH_* setting goes to every run; the defaults here are
# BENCH_SCENARIOS=dice, BENCH_CONCURRENCY=64 and BENCH_DURATION=10s.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${BENCH_AB_ROUNDS:-4}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "BENCH_AB_ROUNDS=$ROUNDS: want a whole number above 0" >&2; exit 2; }
[ -n "${BENCH_A:-}" ] || { echo "BENCH_A is required: a git revision or a fairplay binary to compare with" >&2; exit 2; }
export BENCH_SCENARIOS=${BENCH_SCENARIOS:-dice} BENCH_CONCURRENCY=${BENCH_CONCURRENCY:-64}
export BENCH_DURATION=${BENCH_DURATION:-10s}
case $BENCH_SCENARIOS in dice | dice,*) ;; *) echo "bench-ab compares dice: BENCH_SCENARIOS must start with dice" >&2; exit 2 ;; esac
mkdir -p bin .data/bench
root=$PWD

# build <side> <revision or binary or empty>: the path of the side's server.
build() {
  local side=$1 what=$2 out=bin/fairplay-ab-$1
  if [ -z "$what" ]; then
    echo "==> $side: this tree" >&2
    CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$out" ./cmd/fairplay
  elif [ -x "$what" ] && [ -f "$what" ]; then
    echo "==> $side: $what" >&2
    cp "$what" "$out"
  else
    local rev src
    rev=$(git rev-parse --verify --quiet "$what^{commit}") || { echo "BENCH_$side=$what: neither a binary nor a revision" >&2; exit 2; }
    echo "==> $side: $what ($(git log -1 --format='%h %s' "$rev"))" >&2
    [ -f web/dist/index.html ] || make web >&2
    src=$(mktemp -d)
    git archive "$rev" | tar -x -C "$src"
    rm -rf "$src/web/dist" && cp -r web/dist "$src/web/dist"
    (cd "$src" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$root/$out" ./cmd/fairplay)
    rm -rf "$src"
  fi
  echo "$out"
}
a=$(build A "$BENCH_A")
b=$(build B "${BENCH_B:-}")

results=()
for round in $(seq "$ROUNDS"); do
  order="A B"
  [ $((round % 2)) -eq 0 ] && order="B A"
  for side in $order; do
    bin=$a
    [ "$side" = B ] && bin=$b
    echo "==> round $round of $ROUNDS: $side"
    log=$(mktemp)
    BENCH_SERVER=$bin BENCH_LABEL="ab $side round $round" BENCH_COMPARE= hack/bench.sh >"$log" 2>&1 ||
      { tail -30 "$log" >&2; rm -f "$log"; exit 1; }
    json=$(sed -n 's/^results: \([^ ]*\.json\).*/\1/p' "$log" | tail -1)
    rm -f "$log"
    [ -n "$json" ] || { echo "round $round $side: make bench wrote no results" >&2; exit 1; }
    results+=("$side=$json")
  done
done

python3 - "$BENCH_CONCURRENCY" "${results[@]}" <<'EOF'
import json, statistics, sys
conc = sys.argv[1].split(",")[0]
runs = {"A": [], "B": []}
for arg in sys.argv[2:]:
    side, path = arg.split("=", 1)
    d = json.load(open(path))
    dice = next(r for r in d["runs"] if r["scenario"] == "dice" and str(r["concurrency"]) == conc)
    runs[side].append({"rps": dice["rps"], "p99": dice["p99_ms"], "cpu": dice.get("server_cpu_us_per_op") or 0,
                       "pg": d["pgbench_tps"][conc], "ratio": d["dice_to_pgbench"][conc]})
print(f"\n== dice at {conc} players: A then B, round by round ==")
print(f"{'round':>5} {'A bets/s':>9} {'B bets/s':>9} {'A ratio':>8} {'B ratio':>8} {'A p99':>7} {'B p99':>7}"
      f" {'A µs/bet':>9} {'B µs/bet':>9} {'B/A bets':>9} {'B/A ratio':>9}")
paired_rps, paired_ratio = [], []
for i, (x, y) in enumerate(zip(runs["A"], runs["B"]), 1):
    paired_rps.append(y["rps"] / x["rps"])
    paired_ratio.append(y["ratio"] / x["ratio"])
    print(f"{i:>5} {x['rps']:>9.0f} {y['rps']:>9.0f} {x['ratio']:>8.3f} {y['ratio']:>8.3f} {x['p99']:>7.2f} {y['p99']:>7.2f}"
          f" {x['cpu']:>9.1f} {y['cpu']:>9.1f} {paired_rps[-1]:>9.3f} {paired_ratio[-1]:>9.3f}")
med = statistics.median
print(f"median {med(r['rps'] for r in runs['A']):>8.0f} {med(r['rps'] for r in runs['B']):>9.0f}"
      f" {med(r['ratio'] for r in runs['A']):>8.3f} {med(r['ratio'] for r in runs['B']):>8.3f}"
      f" {med(r['p99'] for r in runs['A']):>7.2f} {med(r['p99'] for r in runs['B']):>7.2f}"
      f" {med(r['cpu'] for r in runs['A']):>9.1f} {med(r['cpu'] for r in runs['B']):>9.1f}"
      f" {med(paired_rps):>9.3f} {med(paired_ratio):>9.3f}")
up = sum(p > 1 for p in paired_rps)
print(f"B had more bets/s than A in {up} of {len(paired_rps)} rounds"
      f" (paired B/A from {min(paired_rps):.3f} to {max(paired_rps):.3f})")
EOF
