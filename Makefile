# The front door: `make run` starts the service, `make test` runs every test.
SHELL := /bin/bash
GO ?= go
export DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/contentapi?sslmode=disable
export REDIS_URL ?= redis://127.0.0.1:6379/0
STRIPE_MOCK_VERSION := v0.203.0
GOLANGCI_LINT_VERSION := v2.6.2
BIN := bin

.PHONY: help build run test fault audit-proof fuzz stateful bench bench-scale lint migrate seed clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build api, worker and ctl into bin/
	$(GO) build -o $(BIN)/ ./cmd/...

# run says what it does before each step: the first build downloads and compiles every
# module (minutes on a cold cache, silent without -v), and `go build -v` names each package
# as it compiles it. The first of api and worker to exit ends the run with its status (an
# API that cannot bind fails `make run`); Ctrl-C or TERM stops both. The trap clears itself
# before signalling the two: a `kill 0` in the trap also hit the shell, whose trap ran
# again until bash crashed.
run: ## run API and worker against local PostgreSQL and Redis (creates and migrates the database; installs Chromium for rendered audits)
	@# Chromium renders audits with "render": "javascript" (installed as make test does).
	command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null || [ -n "$$CHROME_PATH" ] || (apt-get update && apt-get install -y chromium)
	@echo "make run: building api, worker and ctl into $(BIN)/ (the first build downloads modules and can take minutes)..."
	$(GO) build -v -o $(BIN)/ ./cmd/...
	@# The servers used, passwords masked, and a warning: a Redis database is shared with
	@# whatever else uses it (another checkout's make run would take this one's tasks).
	@mask() { sed -E 's#(://[^:/@]*):.*@#\1:xxxxx@#; s#([?&][^=&]*(pass|secret|token)[^=&]*=)[^&]*#\1xxxxx#gI' <<<"$$1"; }; \
	echo "make run: PostgreSQL $$(mask "$$DATABASE_URL"), Redis $$(mask "$$REDIS_URL")"; \
	echo "make run: anything else using that Redis database shares its queues and caches; for one of its own: REDIS_URL=redis://127.0.0.1:6379/N make run (N from 1 to 15), and the same REDIS_URL for bin/ctl"
	@echo "make run: migrating the database and loading the sample data if it is empty..."
	$(BIN)/ctl migrate
	$(BIN)/ctl seed-sample --if-empty
	@echo "make run: starting worker and api (Ctrl-C stops both)..."
	@$(BIN)/worker & worker=$$!; \
	$(BIN)/api & api=$$!; \
	stop() { trap - INT TERM EXIT; kill $$worker $$api 2>/dev/null; wait $$worker $$api; }; \
	trap 'stop; kill -INT $$$$' INT; trap 'stop; kill -TERM $$$$' TERM; trap stop EXIT; \
	wait -n $$worker $$api; status=$$?; \
	stop; exit $$status

# The packages holding money and concurrency (job path, ledger, worker handlers, auth gate,
# billing) run under the race detector, the others without it.
RACE_PKGS := ./internal/job/... ./internal/credits/... ./jobs/... ./internal/auth/... ./internal/billing/... ./internal/app/...

# make test's packages run TEST_P at a time (default: one per core, as go test does), these
# first: the longest (in make test on two cores: crawler 72 s, httpapi 55 s without its
# redelivery test, dashboard 46 s, faulttest 35 s, importer 31 s, openapi 18 s). More than
# the cores finished sooner here but overloaded bounds of the browser and failover tests
# (TestRenderHostilePages at twice the cores, TestSentinelFailoverUnderLoad at one more).
TEST_P ?= $(shell nproc 2>/dev/null || echo 2)
TEST_FIRST := ./internal/crawler ./internal/httpapi ./internal/dashboard ./internal/faulttest ./internal/keywords/importer ./internal/openapi ./internal/keywords/local ./deploy
# Tests that mostly wait run in a go test of their own beside the rest, holding no slot of
# TEST_P: the redelivery test idles a minute until asynq's recoverer hands a killed
# worker's task on (the task's 30 s lease, then the recoverer's 30 s cutoff).
TEST_ALONE := TestKilledWorkersJobTakenOverOnRedelivery
TEST_ALONE_PKG := ./internal/httpapi

test: export GOFLAGS := $(strip $(GOFLAGS) -trimpath)
test: ## run all tests against the local PostgreSQL and Redis (installs the pinned stripe-mock, and Chromium for the dashboard's browser test)
	test -x "$$($(GO) env GOPATH)/bin/stripe-mock" || $(GO) install github.com/stripe/stripe-mock@$(STRIPE_MOCK_VERSION)
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)
	@# api, worker and ctl are built once, beside vet, for the tests that start them
	@# (CONTENTAPI_TEST_BIN).
	@mkdir -p $(BIN); $(GO) build -o $(BIN)/ ./cmd/api ./cmd/worker ./cmd/ctl & built=$$!; \
	$(GO) vet ./... && (cd client && $(GO) vet ./...); vetted=$$?; \
	wait $$built && exit $$vetted
	@# The race pass runs beside the rest; its output is printed after, so the two do not
	@# interleave. The rest run TEST_P packages at a time, the longest first (TEST_FIRST),
	@# so that none of them starts last and runs on alone. The Go client is a module of its
	@# own (client/go.mod), outside ./...: its tests run after. -trimpath (GOFLAGS, set above)
	@# leaves the checkout's path out of the build: a fresh clone elsewhere reuses what an
	@# earlier run on the machine compiled instead of compiling every package again.
	@# The workers the tests start share keyword columns through files in a directory of
	@# the run's own, not the user's cache (KEYWORD_COLUMNS_DIR).
	@mkdir -p $(BIN); \
	export CONTENTAPI_TEST_BIN=$(abspath $(BIN)); \
	export KEYWORD_COLUMNS_DIR=$$(mktemp -d); trap 'rm -rf "$$KEYWORD_COLUMNS_DIR"' EXIT; \
	$(GO) test -count=1 -race -timeout 15m $(RACE_PKGS) > $(BIN)/test-race.log 2>&1 & race=$$!; \
	$(GO) test -count=1 -timeout 15m -run '^($(TEST_ALONE))$$' $(TEST_ALONE_PKG) > $(BIN)/test-alone.log 2>&1 & alone=$$!; \
	$(GO) test -p $(TEST_P) -count=1 -timeout 15m -skip '^($(TEST_ALONE))$$' $$($(GO) list $(TEST_FIRST)) \
		$$($(GO) list ./... | grep -vxF -f <($(GO) list $(RACE_PKGS) $(TEST_FIRST))); plain=$$?; \
	(cd client && $(GO) test -count=1 -timeout 5m ./...); own=$$?; \
	wait $$race; raced=$$?; wait $$alone; waited=$$?; \
	echo "== under the race detector: $(RACE_PKGS)"; cat $(BIN)/test-race.log; \
	echo "== beside the rest: $(TEST_ALONE) ($(TEST_ALONE_PKG))"; cat $(BIN)/test-alone.log; \
	exit $$(( plain != 0 || own != 0 || raced != 0 || waited != 0 ))

fault: ## the fault proof alone, verbose: real api/worker binaries, PostgreSQL and Redis killed for 10 s during 200 calls
	$(GO) test -count=1 -v -timeout 10m -run 'TestFaultOutageDuringLoad' ./internal/faulttest/

audit-proof: ## audit the Rust toolchain's html books (served locally, with a sitemap) and print each finding beside an independent reading of the files
	set -o pipefail; $(GO) test -count=1 -v -run '^TestAuditProofRustBooks$$' ./internal/report/ | grep -v '^=== '

FUZZTIME ?= 30s
# Fuzz targets are found, not listed: packages whose tests declare a Fuzz function, then
# `go test -list` for the exact names (go test -fuzz takes one target per run).
fuzz: ## run every Fuzz* target in the repo for FUZZTIME each (default 30s)
	@failed=; \
	for pkg in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -r -n1 dirname | sort -u); do \
		list=$$($(GO) test -list '^Fuzz' $$pkg) || { echo "$$list"; failed="$$failed $$pkg"; continue; }; \
		for target in $$(echo "$$list" | grep '^Fuzz'); do \
			echo "== $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg || failed="$$failed $$pkg:$$target"; \
		done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz targets failed:$$failed"; exit 1; fi

STATEFUL_OPS ?= 2000
STATEFUL_SEED ?= 0
stateful: ## the keyword answers' stateful property test, long: STATEFUL_OPS operations (default 2000), STATEFUL_SEED (default 0: from the clock)
	$(GO) test -count=1 -timeout 4h -v -run '^TestStatefulKeywordAnswers$$' ./internal/keywords/importer/ -args -stateful.ops=$(STATEFUL_OPS) -stateful.seed=$(STATEFUL_SEED)

bench: ## run the benchmarks (HTTP throughput and latency, job round trip, crawl rate)
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 ./...

# SCALE=10: one size ten times the largest default, 10M keywords and 30M rankings per
# data-set shape (about 15 minutes on a quiet machine, most of it generating and importing).
ifeq ($(SCALE),10)
KEYWORDS ?= 10000000
RANKINGS ?= 30000000
endif
KEYWORDS ?= 100000,1000000
RANKINGS ?= 300000,3000000
BENCH_DOMAINS ?= 2000
BENCH_HTTP ?= true
bench-scale: build ## load generated keyword data (KEYWORDS=…, RANKINGS=…, or SCALE=10 for 10M/30M) through ctl import into a throwaway database and time answers in process and through the real api and worker (BENCH_HTTP=false: in process only)
	$(GO) run ./cmd/benchscale -ctl $(BIN)/ctl -api $(BIN)/api -worker $(BIN)/worker -http=$(BENCH_HTTP) -keywords $(KEYWORDS) -rankings $(RANKINGS) -domains $(BENCH_DOMAINS)

lint: ## run golangci-lint (pinned version)
	$(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) run ./...
	cd client && $(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) run ./...

migrate: build ## apply database migrations only
	$(BIN)/ctl migrate

clean: ## remove build output
	rm -rf $(BIN)
