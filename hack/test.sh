#!/usr/bin/env bash
# make test: every suite against real services. Starts the local Postgres and
# Redis under .data/ unless DATABASE_URL and REDIS_URL are given, checks that
# generated code is fresh, vets and lints, runs the Go tests (with the race
# detector wherever there is concurrency) and the web app's tests, and ends
# with one summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .data/test
export PATH=$PWD/bin:$PATH

# What a fresh Debian machine lacks (the summary's python3, Chromium for the
# end-to-end step, etcd for envtest); each step's own script checks again.
hack/apt.sh python3:python3 chromium:/usr/bin/chromium etcd-server:/usr/bin/etcd

if [ -z "${DATABASE_URL:-}" ] || [ -z "${REDIS_URL:-}" ]; then
  hack/services.sh start
  eval "$(hack/services.sh env)"
fi
export DATABASE_URL REDIS_URL

step() { printf '\n==> %s\n' "$*"; }

step "tools"
hack/tools.sh buf protoc-gen-go protoc-gen-connect-go gotestsum golangci-lint controller-gen helm

step "generated code is fresh"
make --no-print-directory check-generated

step "vet and lint"
make --no-print-directory vet
bin/golangci-lint run ./...

# Pure packages (game math, money, fairness) and the operator (one reconcile at
# a time per object, against envtest) run without the race detector, so the
# million-outcome simulations and controller-runtime compile quickly;
# everything else — the server, with its concurrent bets — runs with it.
pure=$(go list ./internal/games/... ./internal/money/... ./internal/fair/... ./internal/controller/... ./api/...)
rest=$(go list ./... | grep -v -x -F -f <(echo "$pure"))

step "envtest: kube-apiserver and etcd for the operator's tests"
KUBEBUILDER_ASSETS=$(hack/envtest.sh)
export KUBEBUILDER_ASSETS

# Tests that count a request's heap allocations run without the race
# detector, whose sync.Pool drops a quarter of what is put back, at random.
allocs='^(TestRefusedDealDoesTheSameWork|TestStartDoesTheSameWork|TestDealDoesTheSameWork)$'
status=0
# Every test that skips itself under the race detector must run here, or it
# never runs at all.
for name in $(grep -rh -B3 'if raceDetector {' --include='*_test.go' internal test | sed -n 's/^func \(Test[A-Za-z0-9_]*\).*/\1/p'); do
  if ! grep -Eq "[(|]$name[|)]" <<<"$allocs"; then
    echo "hack/test.sh: $name skips under the race detector but is not in allocs, so it would never run" >&2
    status=1
  fi
done

step "go tests (race detector)"
rm -f .data/test/go-*.json
gotestsum --format pkgname-and-test-fails --jsonfile .data/test/go-race.json -- -race -count=1 -timeout 20m -skip "$allocs" $rest || status=1
step "go tests (pure packages, and the allocation counts without the race detector)"
gotestsum --format pkgname-and-test-fails --jsonfile .data/test/go-pure.json -- -count=1 -timeout 20m $pure || status=1
gotestsum --format pkgname-and-test-fails --jsonfile .data/test/go-allocs.json -- -count=1 -timeout 5m -run "$allocs" ./test/security ./internal/play || status=1

step "fuzz (short run: every target for FUZZTIME, default 10s; make fuzz FUZZTIME=1h for long runs)"
FUZZTIME="${FUZZTIME:-10s}" hack/fuzz.sh || status=1

step "make bench-sql, short form (Postgres' instructions per bet of a batch, per game action alone and in batches, counted by callgrind)"
PGCOST_PLAYERS=8 PGCOST_BATCH=4 PGCOST_WARMUP=2 PGCOST_BATCHES=2 PGCOST_TOP=5 hack/pgcost.sh || status=1
PGCOST_SCENARIO=actions PGCOST_PLAYERS=8 PGCOST_BATCH=4 PGCOST_WARMUP=2 PGCOST_BATCHES=2 PGCOST_TOP=5 hack/pgcost.sh || status=1
PGCOST_SCENARIO=action-batches PGCOST_PLAYERS=8 PGCOST_BATCH=4 PGCOST_WARMUP=2 PGCOST_BATCHES=2 PGCOST_TOP=5 hack/pgcost.sh || status=1

step "monitoring: dashboard and alert PromQL against the registered metrics, alert rule unit tests (hack/promcheck)"
# A module of its own (the Prometheus library's dependencies stay out of
# go.mod); its gotestsum JSON joins the summary.
(cd hack/promcheck && go vet ./... &&
  gotestsum --format pkgname-and-test-fails --jsonfile ../../.data/test/go-promcheck.json -- -count=1 ./...) || status=1

step "helm chart: lint, template, schema"
hack/helm-test.sh || status=1

if [ -f web/package.json ]; then
  step "web: typecheck, lint, unit tests, build"
  hack/web.sh deps
  (cd web && npm run typecheck) || status=1
  (cd web && npm run lint) || status=1
  (cd web && npx vitest run --reporter=default --reporter=json --outputFile=../.data/test/web-unit.json) || status=1
  (cd web && npm run build) || status=1
fi

if [ -f web/package.json ]; then
  step "end to end: Playwright in Chromium against the real server"
  hack/e2e.sh || status=1
fi

step "real node: the short form of make test-cluster (one-node cluster, helm install, upgrade under load, uninstall)"
FAIRPLAY_CLUSTER_SHORT=1 hack/cluster-test.sh || status=1

step "summary"
python3 hack/test-summary.py .data/test || status=1
exit $status
