# Every tool comes from go.mod (tool directives) or the Go distribution: a fresh machine needs Go only.
GO       ?= go
PKGS     ?= ./...
TESTFLAGS ?= -race -count=1 -timeout 15m
BENCHTIME ?= 1s

.PHONY: run run-credit run-topup test lint generate check-generate bench bench-services bench-cpu build migrate docs-assets

## run: both services in development mode on the embedded defaults (SQLite under ./data, built-in
## fakes); CREDIT_PORT / TOPUP_PORT move them. Stops both when either exits, non-zero when either failed.
run:
	@GO="$(GO)" scripts/run.sh

run-credit:
	$(GO) run ./services/credit

run-topup:
	$(GO) run ./services/topup

## test: every test with the race detector, then one line saying whether the PostgreSQL
## variants ran (TEST_DATABASE_URL set), were skipped, or fail (REQUIRE_POSTGRES=1 without it)
test:
	@echo '$(GO) test $(TESTFLAGS) $(PKGS)'; \
	$(GO) test $(TESTFLAGS) $(PKGS); status=$$?; \
	if [ -n "$$TEST_DATABASE_URL" ]; then \
	  echo "PostgreSQL variants: ran on TEST_DATABASE_URL"; \
	elif [ "$$REQUIRE_POSTGRES" = 1 ]; then \
	  echo "PostgreSQL variants: not run: REQUIRE_POSTGRES=1 without TEST_DATABASE_URL makes each one fail"; \
	else \
	  echo "PostgreSQL variants: skipped (TEST_DATABASE_URL is not set; REQUIRE_POSTGRES=1 makes that a failure)"; \
	fi; \
	exit $$status

## lint: formatting, vet and staticcheck
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) tool staticcheck $(PKGS)

## generate: regenerate committed generated code (gowsdl from the WSDL files, post-processed)
generate:
	$(GO) generate $(PKGS)

## check-generate: fail when regenerating changes a committed file
check-generate: generate
	@git diff --exit-code --stat -- . || { echo "generated code is stale: run make generate and commit"; exit 1; }

## docs-assets: refresh the Redoc bundle that /docs embeds (internal/apidoc/assets), pinned to
## REDOC_VERSION, from the npm registry. The bundle's one load from the network (Redocly's logo
## on its CDN) is cut, so the page works offline; the result is committed.
REDOC_VERSION ?= 2.5.2
docs-assets:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	(cd "$$tmp" && npm pack --silent redoc@$(REDOC_VERSION) >/dev/null) && \
	tar -xzf "$$tmp/redoc-$(REDOC_VERSION).tgz" -C "$$tmp" package/bundles/redoc.standalone.js package/LICENSE && \
	sed 's|"https://cdn.redoc.ly/redoc/logo-mini.svg"|"data:,"|' "$$tmp/package/bundles/redoc.standalone.js" \
		> internal/apidoc/assets/redoc.standalone.js && \
	cp "$$tmp/package/LICENSE" internal/apidoc/assets/redoc.LICENSE && \
	if grep -q 'cdn\.redoc\.ly' internal/apidoc/assets/redoc.standalone.js; then \
		echo "the bundle still loads from cdn.redoc.ly: update the sed of docs-assets"; exit 1; fi && \
	echo "internal/apidoc/assets: redoc $(REDOC_VERSION)"

## bench: every benchmark with allocation counts
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $(PKGS)

## bench-services: both services side by side with ../shared/perf's floor program, SQLite and
## PostgreSQL, three runs each, then the ratio table (BENCHMARKS.md; about 20 minutes)
bench-services:
	scripts/bench-services.sh

## bench-cpu: CPU time per request of each process (floor or service, upstream, PostgreSQL,
## load generator), the floor and the services alternated (BENCHMARKS.md; about 6 minutes)
bench-cpu:
	scripts/cpu-per-request.sh

## migrate: apply both services' migrations (DATABASE_URL, else the SQLite files under ./data) and exit
migrate:
	@mkdir -p data
	$(GO) run ./services/credit migrate
	$(GO) run ./services/topup migrate

build:
	$(GO) build $(PKGS)
