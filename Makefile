# cni-repair — every target installs what it needs first (Node 24, npm packages, test control plane).
SHELL := /bin/bash
.DEFAULT_GOAL := help

NODE_VERSION := 24.22.3
NODE_ARCH := $(subst aarch64,arm64,$(subst x86_64,x64,$(shell uname -m)))
NODE_PACKAGE := node-linux-$(NODE_ARCH)
PINNED_NODE_DIR := $(CURDIR)/.tools/node-v$(NODE_VERSION)
PINNED_NODE := $(PINNED_NODE_DIR)/node_modules/$(NODE_PACKAGE)/bin/node

# The machine's Node is used when it satisfies package.json "engines" (24.11+ and below 25); otherwise
# the pinned official binary from the npm registry goes into .tools/ and first on PATH.
SYSTEM_NODE_OK := $(shell node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a===24&&b>=11?0:1)' 2>/dev/null && echo yes)
ifeq ($(SYSTEM_NODE_OK),yes)
NODE_READY :=
else
NODE_READY := $(PINNED_NODE)
export PATH := $(dir $(PINNED_NODE)):$(PATH)
endif

ARGS ?=

.PHONY: help
help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{ printf "  make %-12s %s\n", $$1, $$2 }'

$(PINNED_NODE):
	@echo "installing Node $(NODE_VERSION) from the npm registry into .tools/ (the machine's Node is not 24)"
	rm -rf $(PINNED_NODE_DIR).tmp
	npm install --prefix $(PINNED_NODE_DIR).tmp --no-save --no-package-lock --no-audit --no-fund $(NODE_PACKAGE)@$(NODE_VERSION)
	rm -rf $(PINNED_NODE_DIR) && mv $(PINNED_NODE_DIR).tmp $(PINNED_NODE_DIR)

node_modules/.installed: package-lock.json $(NODE_READY)
	npm ci --no-audit --no-fund
	touch $@

.PHONY: deps
deps: node_modules/.installed ## Install Node 24 (if needed) and the npm packages

.PHONY: controlplane
controlplane: ## Build (once, cached) etcd, kube-apiserver, kubectl, kube-controller-manager, kube-scheduler and kubelet
	test/controlplane/build.sh >/dev/null

# The demo and the benchmarks start only these two, so a newcomer's first `make demo` builds nothing else.
.PHONY: controlplane-server
controlplane-server: ## Build (once, cached) only etcd and kube-apiserver
	test/controlplane/build.sh etcd kube-apiserver >/dev/null

.PHONY: kwok
kwok: ## Build (once, cached) kwok, whose fake nodes run the pods of the whole-cluster e2e tests
	test/controlplane/kwok/build.sh >/dev/null

# $(call apt_when_missing,COMMANDS,PACKAGES): installs the Debian packages with apt-get unless every command is there.
define apt_when_missing
@missing=; for c in $(1); do command -v $$c >/dev/null || missing=yes; done; [ -z "$$missing" ] || { \
  command -v apt-get >/dev/null || { echo "$(1) needed: install them (Debian: apt-get install $(2))" >&2; exit 1; }; \
  sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
  echo "installing Debian's $(2) with apt-get"; \
  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends \
    -o DPkg::Lock::Timeout=300 $(2) >/dev/null; }
endef

# Istio's data plane (CNI agent, plugin, pilot-agent) from Istio's sources, for the real-node e2e test beside the
# real Istio (test/istio/build.sh; the pin is test/istio/go.mod). Cold, the longest build of all: see docs/development.md.
.PHONY: istio
istio: node ## Build (once, cached) Istio's install-cni, istio-cni and pilot-agent from the Go module proxy, and their images
	test/istio/images.sh >/dev/null

.PHONY: tools
tools: ## Build (once, cached) helm and actionlint from the Go module proxy (tools/*/go.mod); shellcheck from Debian
	tools/build.sh helm >/dev/null
	tools/build.sh actionlint >/dev/null
	$(call apt_when_missing,shellcheck,shellcheck)

.PHONY: manifests
manifests: ## Regenerate manifests/ (kustomize) from the Helm chart charts/cni-repair
	manifests/generate.sh

# Debian's package (Prometheus 2.42 and promtool) for the monitoring test; installed only when either is missing.
.PHONY: prometheus
prometheus: ## Install prometheus and promtool (Debian package, via apt-get) when missing
	$(call apt_when_missing,prometheus promtool,prometheus)

# Debian's podman with runc, as root, for the image test (test/harness/podman.ts keeps its storage and settings
# in a temporary directory); installed only when either is missing.
.PHONY: podman
podman: ## Install podman and runc (Debian packages, via apt-get) when missing
	$(call apt_when_missing,podman runc,podman runc)

# Debian's containerd (1.6) with runc, the standard CNI plugins, iptables and busybox-static, for the real-node e2e
# test (test/harness/real-node keeps every state and socket in a temporary directory); installed only when missing.
.PHONY: node
node: ## Install containerd, runc, the CNI plugins, iptables, busybox-static (Debian packages, via apt-get) when missing
	$(call apt_when_missing,containerd runc iptables nsenter /usr/lib/cni/bridge /bin/busybox,containerd runc containernetworking-plugins iptables util-linux busybox-static)

# The image (image/build.sh, docs in docs/development.md "Container image"). VERSION must equal package.json's version;
# IMAGE_PUSH=ghcr.io/org/cni-repair:1.2.3 pushes the index with crane (credentials from ~/.docker/config.json).
VERSION ?= $(shell sed -n 's/^  "version": "\(.*\)",$$/\1/p' package.json)
GIT_REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
IMAGE_SOURCE ?= https://github.com/cni-repair/cni-repair
IMAGE_OUT ?= $(CURDIR)/dist/image
IMAGE_PUSH ?=
CRANE_VERSION := v0.22.1
SYFT_VERSION := v1.57.2

.PHONY: image
image: build ## OCI image index (linux/amd64+arm64) and SBOMs into dist/image/ (VERSION GIT_REVISION SOURCE_DATE_EPOCH IMAGE_SOURCE IMAGE_PUSH)
	VERSION=$(VERSION) GIT_REVISION=$(GIT_REVISION) SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) \
	  IMAGE_SOURCE=$(IMAGE_SOURCE) IMAGE_OUT=$(IMAGE_OUT) IMAGE_PUSH=$(IMAGE_PUSH) NODE_VERSION=$(NODE_VERSION) \
	  CRANE_VERSION=$(CRANE_VERSION) SYFT_VERSION=$(SYFT_VERSION) image/build.sh

.PHONY: image-pins
image-pins: deps ## Pin the image's Debian packages and Node binaries to today's versions (image/inputs.lock)
	image/pin-inputs.sh $(NODE_VERSION)

# The chart as a .tgz for `helm push` (the release workflow) and `helm install` (the chart's install test), with
# the same VERSION as the image.
CHART_OUT ?= dist/chart
.PHONY: chart-package
chart-package: ## Lint (strict) and package the Helm chart as $(CHART_OUT)/cni-repair-$(VERSION).tgz
	@charts/package.sh "$(VERSION)" "$(CHART_OUT)"

.PHONY: build
build: deps ## Compile TypeScript (src, test, bench) into dist/
	rm -rf dist
	npx tsc -p tsconfig.json
	echo "$(GIT_REVISION)" >dist/revision

# The app as the image carries it (image/bundle.sh), for the benchmarks: dist/bundle/dist/src/cli/main.js.
.PHONY: bundle
bundle: build ## Bundle dist/src as the image does, with its code cache, into dist/bundle/ (the benchmarks run it)
	image/bundle.sh dist/bundle
	cp package.json dist/bundle/
	cp dist/revision dist/bundle/dist/revision
	image/code-cache.sh dist/bundle

.PHONY: lint
lint: deps ## Lint and check formatting (Biome); no import cycle between folders of src/ (dependency-cruiser)
	npx biome check .
	npx depcruise --config .dependency-cruiser.json src

.PHONY: format
format: deps ## Fix formatting and safe lint findings
	npx biome check --write .

.PHONY: docs
docs: build ## Regenerate docs/flags.md from --help (a unit test fails while it differs)
	node dist/test/docs/write-flags-reference.js

# Detection's unit tests read pod statuses a real kubelet wrote (test/fixtures/kubelet); this records them again.
.PHONY: fixtures-kubelet
fixtures-kubelet: build controlplane node ## Re-record test/fixtures/kubelet/*.json from a real kubelet (root)
	node dist/test/fixtures/record-kubelet-statuses.js

# The same for Istio's real validator and CNI agent (built from Istio's sources): test/fixtures/kubelet/istio-real.
.PHONY: fixtures-istio
fixtures-istio: build controlplane node istio ## Re-record test/fixtures/kubelet/istio-real/*.json from Istio's real validator and agent (root)
	node dist/test/fixtures/record-istio-statuses.js

.PHONY: test-unit
test-unit: build ## Unit tests only (no control plane)
	npx mocha --config test/mocharc.unit.json

.PHONY: test-integration
test-integration: build controlplane kwok prometheus podman node image tools istio ## Integration tests against a real etcd + kube-apiserver
	npx mocha --config test/mocharc.integration.json

.PHONY: test
test: build bundle lint controlplane kwok prometheus podman node image tools istio $(if $(BENCH_ISTIO_REPAIR),,istio-repair) ## Type-check, lint, unit and integration tests, bench smoke (installs everything first)
	npx mocha --config test/mocharc.unit.json
	npx mocha --config test/mocharc.integration.json
	$(BENCH_SMOKE_RUN)

.PHONY: demo
demo: build controlplane-server ## Local control plane + broken mesh pods + the controller repairing them live; Ctrl-C ends it
	node dist/test/demo/demo.js $(ARGS)

# Benchmarks (bench/README.md): sizes and durations come from BENCH_* variables, e.g. BENCH_PODS=100000.
# Istio's repair controller is in every run (cached build, bench/istio-repair/build.sh); BENCH_ISTIO_REPAIR given
# (a path, or `off` to leave it out, said as SKIPPED) wins. A smoke run without it and without `off` fails.
WITH_ISTIO_REPAIR := if [ -z "$${BENCH_ISTIO_REPAIR:-}" ]; then \
  BENCH_ISTIO_REPAIR=$$(bench/istio-repair/build.sh)/istio-repair || exit 1; export BENCH_ISTIO_REPAIR; fi;
BENCH_SMOKE_RUN := @$(WITH_ISTIO_REPAIR) BENCH_SMOKE=1 BENCH_OUT=bench/results/smoke node dist/bench/run.js

.PHONY: bench
bench: bundle controlplane-server ## Benchmarks vs a client-node baseline and Istio's repair controller (~60 min; BENCH_PODS=100000 scales up) into bench/results/
	@$(WITH_ISTIO_REPAIR) node dist/bench/run.js

# Istio's own repair controller for the side-by-side runs: the first build compiles istio's dependency tree (niced,
# 10-20 min on 2 busy cores); `make bench`, `bench-smoke` and `test` do it too (cached: once), this target only
# builds ahead (e.g. in the background).
.PHONY: istio-repair
istio-repair: ## Build (once, cached) Istio's repair controller from the Go module proxy (bench/istio-repair/go.mod)
	bench/istio-repair/build.sh

# Only the DaemonSet rollout on many nodes (bench/README.md, "Fleet rollout"), side by side with Istio's controller.
FLEET_ONLY := BENCH_SIZES=none BENCH_PER_NODE_ROUNDS=0 BENCH_SIDE_PODS=0 BENCH_OUTAGE_ROUNDS=0 BENCH_SOAK_SECONDS=0 \
  BENCH_MASS_PODS=0
.PHONY: bench-fleet
bench-fleet: bundle controlplane-server ## Only the DaemonSet rollout: 100 per-node instances at once (BENCH_FLEET_NODES), beside Istio's (~15 min)
	@$(WITH_ISTIO_REPAIR) $(FLEET_ONLY) node dist/bench/run.js

.PHONY: bench-smoke
bench-smoke: bundle controlplane-server ## The benchmarks at a few dozen pods, one round (under a minute), with Istio's controller (built once), so they keep working
	$(BENCH_SMOKE_RUN)

.PHONY: run
run: build ## Run cni-repair against the current kubeconfig: ARGS="run --mode delete" ...; without ARGS: run --mode report (changes nothing)
	node dist/src/cli/main.js $(or $(ARGS),run --mode report)

.PHONY: clean
clean: ## Remove build output and installed tools (not the cached control-plane binaries)
	rm -rf dist node_modules .tools

.PHONY: clean-cache
clean-cache: ## Remove the cached control-plane binaries too
	rm -rf "$${CNI_REPAIR_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/cni-repair}"
