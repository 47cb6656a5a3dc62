#!/usr/bin/env bash
# make fuzz: run every Go fuzz target for FUZZTIME (default 10s) each, one
# after another, against real Postgres and Redis (the /api body fuzzers start
# the server in-process). A crasher fails the run; go test writes it to the
# package's testdata/fuzz/<Target>/ — check it in as a regression with the fix.
#   FUZZTIME=1h hack/fuzz.sh        FUZZ_TARGETS='./internal/rpc:FuzzIsJSONNumber' hack/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PWD/bin:$PATH
FUZZTIME=${FUZZTIME:-10s}

if [ -z "${DATABASE_URL:-}" ] || [ -z "${REDIS_URL:-}" ]; then
  hack/services.sh start >/dev/null
  eval "$(hack/services.sh env)"
fi
export DATABASE_URL REDIS_URL

# Every fuzz target in the tree, found by its declaration, so a new one is
# fuzzed without being listed here.
default_targets=$(git grep -I -o -e '^func Fuzz[A-Za-z0-9_]*' -- '*_test.go' |
  sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz.*)$#./\1:\2#' | sort)
targets=${FUZZ_TARGETS:-$default_targets}

# shutdown_race tells whether a failed run's log is Go's own race at the end
# of -fuzztime (go.dev/issue/75804, fixed in Go 1.27, not in 1.26): the
# target's only failure is "context deadline exceeded", with no failing input
# written, no panic and nothing the target reported. Such a run found
# nothing; it is run once more, and a second failure of any kind fails.
shutdown_race() {
  ! grep -q -E 'Failing input written|panic:' "$1" &&
    [ "$(awk '/^[[:space:]]*--- FAIL: /{f=1; next} f && /^[[:space:]]*FAIL[[:space:]]*$/{exit}
              f {sub(/^[[:space:]]+/, ""); if ($0 != "") print}' "$1" | sort -u)" = 'context deadline exceeded' ]
}

status=0
for t in $targets; do
  pkg=${t%%:*} name=${t##*:}
  log=$(mktemp)
  start=$SECONDS
  result=FAIL
  for attempt in 1 2; do
    if go test -count=1 -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$pkg" >"$log" 2>&1; then
      result=ok
      [ "$attempt" = 2 ] && result=ok2
      break
    fi
    shutdown_race "$log" || break
  done
  [ "$result" = FAIL ] && status=1
  # A run that failed before fuzzing (building, or the baseline) has no
  # count; that must not end the script before its log is printed.
  execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)
  printf '%-4s %-28s %-20s %8s execs %4ss\n' "${result%2}" "$pkg" "$name" "${execs:-?}" $((SECONDS - start))
  if [ "$result" = ok2 ]; then echo "     (the first run hit Go's end-of-fuzztime race, go.dev/issue/75804: run again)"; fi
  if [ "$result" = FAIL ]; then sed 's/^/    /' "$log"; fi
  rm -f "$log"
done
exit $status
