# agent — see README.md. Every target works on a fresh machine with Go installed.
SHELL   := /bin/bash
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
PKGS    := ./...

.PHONY: build test test-arm64 lint bench demo fuzz clean

# The launcher agent sends to SSH hosts to confine unapproved steps
# (package confine), static for linux/amd64 and linux/arm64, is embedded in
# bin/agent (confine/launchers).
LAUNCH_ARCHS := amd64 arm64

build:
	@for arch in $(LAUNCH_ARCHS); do \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -ldflags '-s -w' \
	    -o confine/launchers/embedded/agent-launch-linux-$$arch ./cmd/agent-launch || exit 1; \
	done
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/agent ./cmd/agent

# The test command: formatting and vet, then every test with the race detector.
# Tests talk to real SSH servers (in-process and OpenSSH sshd on loopback).
# The per-package timeout is a hang guard, not a speed target: the attack
# corpora in engine run thousands of steps under -race, and a loaded
# machine took over 15 minutes for that package alone (session 15's CI, its
# three test processes at load 5-9: over 20 for cmd/agent's corpora).
#
# cmd/agent's tests are the longest package by far: end-to-end corpora that
# start agent, sshd and the confined commands thousands of times, mostly one
# process at a time. Its test binary is built once and run as two processes
# beside the other packages: the corpora (AGENT_CORPORA) and the rest, after
# a first run of none has placed the launcher beside it (TestMain's
# placeLauncher) for both (docs/decisions.md "make test's shape").
AGENT_CORPORA := ^(TestAttackCorpus.*|TestMediumCorpus.*|TestLeakCorpus.*|TestSecretCorpus.*|TestSecretsStayHome|TestSecretShapesStayHome|TestOtherAccounts.*)$$
test: lint
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(GO) test -race -c -o "$$tmp/agent.test" ./cmd/agent && \
	{ (cd cmd/agent && "$$tmp/agent.test" -test.run='^$$') > "$$tmp/place.out" 2>&1 || { cat "$$tmp/place.out"; exit 1; }; } && \
	shard() { name=$$1; shift; start=$$SECONDS; \
	  (cd cmd/agent && "$$tmp/agent.test" -test.count=1 -test.timeout=60m "$$@") > "$$tmp/$$name.out" 2>&1; rc=$$?; \
	  if [ $$rc = 0 ]; then echo "ok  	cmd/agent ($$name)	$$((SECONDS - start))s"; else cat "$$tmp/$$name.out"; echo "FAIL	cmd/agent ($$name)"; fi; return $$rc; } && \
	{ shard corpora -test.run='$(AGENT_CORPORA)' & corpora=$$!; \
	  shard rest -test.skip='$(AGENT_CORPORA)' & rest=$$!; \
	  $(GO) test -race -count=1 -timeout 60m $$($(GO) list $(PKGS) | grep -v '/cmd/agent$$'); rc=$$?; \
	  wait $$corpora || rc=1; wait $$rest || rc=1; exit $$rc; }
	$(MAKE) --no-print-directory test-arm64

# The arm64 seccomp filter, built for arm64 (its syscall numbers and audit
# arch) and run in x/net/bpf's interpreter under qemu-user: this machine
# cannot load it into a kernel. CI installs qemu-user; elsewhere a missing
# qemu-aarch64 skips with a note (CI=true fails instead).
test-arm64:
	@if ! command -v qemu-aarch64 >/dev/null; then \
	  if [ "$$CI" = true ]; then echo "test-arm64: qemu-aarch64 missing (apt-get install qemu-user)"; exit 1; fi; \
	  echo "test-arm64: skipped, no qemu-aarch64 (apt-get install qemu-user)"; exit 0; fi; \
	tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) test -c -o "$$tmp/confine.test" ./confine && \
	qemu-aarch64 "$$tmp/confine.test" -test.count=1 -test.v -test.run '^(TestSeccompFilters|TestSeccompKernelABI|FuzzSeccompFilter)$$' | \
	  tee "$$tmp/out" | grep -E '^(--- |ok|PASS|FAIL)' && \
	grep -q '^--- PASS: TestSeccompFilters' "$$tmp/out" && grep -q '^--- PASS: TestSeccompKernelABI' "$$tmp/out" && grep -q '^PASS$$' "$$tmp/out"

# vet with -race: its compiles of the packages' dependencies are then the
# race-built ones make test's test builds take from the cache (from an empty
# cache, session 18: vet and the test builds 554 -> 522 CPU seconds, 379 ->
# 273 s of wall time on 2 cores).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -race $(PKGS)

# Go benchmarks, then agent against OpenSSH on the same sshd, then the
# per-step overhead of `agent run` against a shell loop, a plan on 100 inventory
# hosts against Ansible and parallel-ssh (RUNS=1 for a short run), an `agent mcp`
# call on a warm connection against `agent exec` and ssh ControlMaster, the LLM economy
# of adaptive vs ReAct with the scripted model, the cost of the kernel's
# confinement per step and over a fan-out, redaction's CPU in a 1 MiB step
# (docs/bench.md).
bench: build
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)
	bash bench/run.sh
	bash bench/fanout/run.sh
	bash bench/fanout/exec.sh
	bash bench/confine.sh
	bash bench/mcp.sh
	bash bench/redact.sh
	$(GO) run ./bench/runbench -agent bin/agent
	$(GO) run ./bench/llmbench
	$(GO) run ./bench/searchbench

# The main job on its embedded default: a real run against an in-process SSH
# test host (no LLM is reachable here; see README).
demo: build
	PATH="$(CURDIR)/bin:$$PATH" $(GO) run ./testenv/cmd/testhost -- bash testenv/cmd/testhost/demo.sh

# Short runs of every fuzz target (FUZZTIME each).
FUZZTIME ?= 15s
fuzz:
	@for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 10s $$pkg || exit 1; \
	  done; \
	done

clean:
	rm -rf bin bench/results confine/launchers/embedded/agent-launch-*
