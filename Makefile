# Fairplay — build, run and test. `make run` serves the whole product on
# http://localhost:8080; `make test` runs every suite. Both install what they
# need (pinned tools into ./bin, local Postgres and Redis under ./.data).
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

BIN      := $(CURDIR)/bin
export PATH := $(BIN):$(PATH)
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
HAS_WEB  := $(wildcard web/package.json)

.PHONY: help
help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

##@ Everyday

.PHONY: run
run: ## build everything and serve it with local Postgres and Redis (prints the URL and the admin login)
	hack/run.sh

.PHONY: test
test: ## run every suite against real Postgres and Redis (what CI runs)
	hack/test.sh

.PHONY: build
build: web ## build the server binary (with the web app embedded) into bin/fairplay
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o bin/fairplay ./cmd/fairplay

.PHONY: web
web: ## build the web app into web/dist
ifneq ($(HAS_WEB),)
	hack/web.sh build
else
	@echo "web/: no app yet"
endif

##@ Code generation

.PHONY: tools
tools: ## install the pinned code-generation tools into bin/
	hack/tools.sh buf protoc-gen-go protoc-gen-connect-go

.PHONY: generate
generate: tools ## regenerate code from the protos (Go, TypeScript for the web app, the /api OpenAPI document) and the web app's game tables
	bin/buf generate
	go run ./hack/direct -o internal/gen/fairplay/v1/fairplayv1direct
ifneq ($(HAS_WEB),)
	hack/web.sh deps
	bin/buf generate --template buf.gen.web.yaml
	cd web && node scripts/generate-game-tables.mjs
endif
	go run ./hack/openapi -o internal/gen/openapi

.PHONY: manifests
manifests: ## regenerate CRDs and RBAC from the operator's markers (and the deepcopy code), then sync the chart
	hack/tools.sh controller-gen
	bin/controller-gen rbac:roleName=manager-role crd paths="./api/..." paths="./internal/controller/..." output:crd:artifacts:config=config/crd/bases
	bin/controller-gen object paths="./api/..."
	$(MAKE) --no-print-directory chart-crds

.PHONY: check-generated
check-generated: generate manifests ## fail when committed generated code is stale
	@if [ -n "$$(git status --porcelain -- internal/gen web/src/gen web/src/config/game-tables.ts config api charts/fairplay/crds charts/fairplay/files)" ]; then \
	  echo "generated code is stale; run 'make generate manifests' and commit:"; git status --porcelain -- internal/gen web/src/gen web/src/config/game-tables.ts config api charts/fairplay/crds charts/fairplay/files; \
	  git --no-pager diff --stat -- internal/gen web/src/gen web/src/config/game-tables.ts config api charts/fairplay/crds charts/fairplay/files; exit 1; fi

##@ Quality

.PHONY: fmt
fmt: ## format the Go code
	gofmt -w $$(git ls-files '*.go' | grep -v '^internal/gen/')

.PHONY: vet
vet: ## go vet and a gofmt check
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^internal/gen/')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	go vet ./...

.PHONY: lint
lint: ## golangci-lint (pinned) and the web app's eslint
	hack/tools.sh golangci-lint
	bin/golangci-lint run ./...
ifneq ($(HAS_WEB),)
	hack/web.sh lint
endif

##@ Operator

.PHONY: chart-crds
chart-crds: ## copy the generated CRD and manager role into charts/fairplay (never edit those copies)
	mkdir -p charts/fairplay/crds charts/fairplay/files
	cp config/crd/bases/casino.fairplay.dev_casinos.yaml charts/fairplay/crds/casino.fairplay.dev_casinos.yaml
	cp config/rbac/role.yaml charts/fairplay/files/manager-role.yaml

.PHONY: operator
operator: ## build the operator binary into bin/operator
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o bin/operator ./cmd/operator

.PHONY: image
image: ## build the image from the Dockerfile's stages without docker: OCI archives in bin/image (IMAGE, TAG, VERSION)
	VERSION=$(VERSION) hack/image.sh fairplay
	hack/image.sh pause

.PHONY: image-test
image-test: ## build two tags and the pause image, import them into a private containerd and run them (read-only root, user 65532)
	hack/image-test.sh

.PHONY: envtest
envtest: ## build kube-apiserver for envtest into bin/envtest (once) and link Debian's etcd
	hack/envtest.sh

.PHONY: test-operator
test-operator: ## the operator's envtest suite (real kube-apiserver and etcd)
	KUBEBUILDER_ASSETS="$$(hack/envtest.sh)" go test -count=1 ./api/... ./internal/controller/... ./cmd/operator/...

.PHONY: test-cluster
test-cluster: ## Fairplay on a real one-node cluster: helm install, upgrades under load, rotation, drift (root; FAIRPLAY_CLUSTER_SHORT=1 for the short form in make test)
	hack/cluster-test.sh

.PHONY: cluster
cluster: ## start the one-node cluster and leave it running (prints KUBECONFIG; `hack/cluster.sh down` stops it)
	hack/cluster.sh up

.PHONY: promcheck
promcheck: ## the dashboard's and the alert rules' PromQL against the registered metric names, and the alert rules' unit tests (Prometheus library, hack/promcheck)
	cd hack/promcheck && go vet ./... && go test -count=1 ./...

.PHONY: helm-test
helm-test: ## helm lint, helm template (default and full values), schema rejection, chart copies fresh
	hack/helm-test.sh

##@ Services

.PHONY: services
services: ## start the local Postgres and Redis under .data/
	hack/services.sh start

.PHONY: services-stop
services-stop: ## stop the local Postgres and Redis
	hack/services.sh stop

.PHONY: clean
clean: ## remove build output (keeps .data and bin tools)
	rm -f bin/fairplay
	find web/dist -mindepth 1 ! -name .keep -delete 2>/dev/null || true

##@ Measuring

.PHONY: bench
bench: ## load-test a release build next to pgbench -N and print the table (BENCH_DURATION, BENCH_CONCURRENCY, BENCH_STANDBY=none,sync for the cost of synchronous commit)
	hack/bench.sh

.PHONY: bench-ab
bench-ab: ## make bench's dice for two builds, alternating round by round on a machine whose speed drifts (BENCH_A=<revision or binary>, BENCH_B, BENCH_AB_ROUNDS)
	hack/bench-ab.sh

.PHONY: bench-web
bench-web: ## Lighthouse (mobile) over every route of the release build: scores, FCP, TBT, LCP, CLS (LIGHTHOUSE_RUNS)
	hack/bench-web.sh

.PHONY: bench-sql
bench-sql: ## Postgres instructions per bet of a batch, or per game action with PGCOST_SCENARIO=actions (alone) or action-batches (callgrind, single-user Postgres; steady on a busy machine); VARIANT=file.sql compares a change
	hack/pgcost.sh $(VARIANT)

.PHONY: fuzz
fuzz: ## run every Go fuzz target for FUZZTIME each (default 10s; e.g. make fuzz FUZZTIME=1h)
	FUZZTIME=$(or $(FUZZTIME),10s) hack/fuzz.sh
