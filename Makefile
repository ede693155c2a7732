# oplogha — see README.md. Every target builds what it needs from go.mod.
SHELL := /bin/bash
GO    ?= go
CHAOS := .cache/chaos
FUZZTIME ?= 60s
# each new interesting input is minimized before the fuzzer goes on; with
# kilobyte seeds the default (60s) stalls a short run on one input
FUZZMINIMIZE ?= 5s
TESTFLAGS ?= -race -count=1 -timeout 45m

.PHONY: upstream-chaos all demo test nightly nightly-shard nightly-gate stress gremlins swarm mutants tools images fuzz bench vet clean oplogctl $(CHAOS)

all: vet test

$(CHAOS):
	@mkdir -p .cache
	@$(GO) build -o $(CHAOS) ./cmd/chaos

## oplogctl: the operator's CLI (legacy inspect, reset) into .cache/oplogctl
oplogctl:
	@mkdir -p .cache
	@$(GO) build -o .cache/oplogctl ./cmd/oplogctl

## tools: build etcd, toxiproxy, versitygw and gotestsum into the cache (once per
## version); find Chromium (Debian's chromium package), or say how to install it
tools: $(CHAOS)
	@$(CHAOS) tools

## images: the docker runtime's images (FROM scratch around each tool; once per version; needs a Docker engine)
images: $(CHAOS)
	@$(CHAOS) tools --images

## demo: run the smoke scenario on the process runtime and keep its bundle,
## with report.png: the report as headless Chromium shows it (when Chromium is installed)
demo: $(CHAOS)
	@shot=--screenshot; $(CHAOS) tools --path chromium >/dev/null 2>&1 || { shot=; \
	  echo "demo: no Chromium, so no report.png (apt-get install -y chromium); report.html is written all the same"; }; \
	$(CHAOS) run scenarios/pr/smoke.yaml --keep $$shot

## test: unit and integration tests through gotestsum; JUnit in artifacts/junit.xml.
## Two go test runs, one after the other: every package but tests/docker (the
## pr tier is in harness/runner), then tests/docker. The pr tier is bound by
## the machine's CPU, so it is timed without the docker suite's containers
## beside it; both runs go through one gotestsum, into one JUnit file.
test: $(CHAOS)
	@$(CHAOS) tools
	@mkdir -p artifacts; rm -f artifacts/pr-tier-time.txt
	@start=$$(date +%s); \
	$$($(CHAOS) tools --path gotestsum) --junitfile artifacts/junit.xml --format pkgname-and-test-fails --raw-command -- \
	  bash -c 'rc=0; $(GO) test -json $(TESTFLAGS) $$($(GO) list ./... | grep -v "/tests/docker$$") || rc=1; \
	    $(GO) test -json $(TESTFLAGS) ./tests/docker || rc=1; exit $$rc'; rc=$$?; \
	cat artifacts/pr-tier-time.txt 2>/dev/null; \
	echo "make test: $$(( $$(date +%s) - start ))s, exit $$rc"; exit $$rc

## nightly: every pr and nightly scenario with NIGHTLY_SEEDS seeds each, up to
## the cores at once; JUnit and bundles in artifacts/nightly, then the gate
NIGHTLY_SEEDS ?= 3
NPROC := $(shell nproc 2>/dev/null || echo 2)
nightly: $(CHAOS)
	@$(CHAOS) tools >/dev/null
	@rm -rf artifacts/nightly; mkdir -p artifacts/nightly
	@start=$$(date +%s); \
	$(CHAOS) run scenarios --tier nightly --seeds $(NIGHTLY_SEEDS) --parallel $(NPROC) --out artifacts/nightly --junit artifacts/nightly/junit.xml; rc=$$?; \
	echo "make nightly: runs took $$(( $$(date +%s) - start ))s, exit $$rc"; \
	$(CHAOS) gate artifacts/nightly/*.tar.gz && exit $$rc

## nightly-shard: shard SHARD=K/N of the nightly fan-out: every scenario ×
## NIGHTLY_SHARD_SEEDS seeds, SWARM_SHARD_RUNS swarm draws and the mutant
## corpus, sliced by chaos plan; bundles, JUnit and a status file in artifacts/shard
SHARD ?= 1/1
NIGHTLY_SHARD_SEEDS ?= 5
SWARM_SHARD_RUNS ?= 1000
nightly-shard: $(CHAOS)
	@$(CHAOS) tools >/dev/null
	@rm -rf artifacts/shard; mkdir -p artifacts/shard
	@rc=0; \
	$(CHAOS) run scenarios --tier nightly --seeds $(NIGHTLY_SHARD_SEEDS) --shard $(SHARD) --parallel $(NPROC) --out artifacts/shard --junit artifacts/shard/scenarios.xml || rc=1; \
	$(CHAOS) swarm --seed $(SWARM_SEED) --runs $(SWARM_SHARD_RUNS) --shard $(SHARD) --budget 100m --parallel $(NPROC) --out artifacts/shard --junit artifacts/shard/swarm.xml || rc=1; \
	$(CHAOS) mutants --shard $(SHARD) --out artifacts/shard/mutants || rc=1; \
	echo "shard $(SHARD) exit $$rc" > artifacts/shard/status-$$(echo $(SHARD) | tr / -).txt; exit $$rc

## nightly-gate: over the downloaded shards (artifacts/shards/*): every shard
## reported, and every audit of every bundle passed
SHARDS ?= 16
nightly-gate: $(CHAOS)
	@n=$$(ls artifacts/shards/*/status-*.txt 2>/dev/null | wc -l); \
	if [ "$$n" -ne $(SHARDS) ]; then echo "nightly: $$n of $(SHARDS) shards reported"; exit 1; fi; \
	cat artifacts/shards/*/status-*.txt; \
	$(CHAOS) gate artifacts/shards/*/*.tar.gz && ! grep -q "exit [^0]" artifacts/shards/*/status-*.txt

## gremlins: go-gremlins over the impl packages with their own tests
## (efficacy = killed / (killed + lived)); table in artifacts/gremlins/results.md
GREMLINS_PKGS ?= publish maintain state contract snapshot objstore
GREMLINS_MIN ?= 80
gremlins: $(CHAOS)
	@rm -rf artifacts/gremlins; mkdir -p artifacts/gremlins
	@for p in $(GREMLINS_PKGS); do echo "[gremlins] impl/$$p"; \
	  $(GO) tool gremlins unleash --workers 1 --timeout-coefficient 30 -o artifacts/gremlins/$$p.json ./impl/$$p | tail -3 || exit 1; done
	@$(CHAOS) gremlins-report --in artifacts/gremlins --min-efficacy $(GREMLINS_MIN)

## stress: every pr scenario STRESS_RUNS times on consecutive seeds; pass
## rates and failures grouped in artifacts/stress/table.md (failing bundles kept)
STRESS_RUNS ?= 20
STRESS_TIER ?= pr
stress: $(CHAOS)
	@$(CHAOS) tools >/dev/null
	@rm -rf artifacts/stress; mkdir -p artifacts/stress
	@$(CHAOS) stress scenarios --tier $(STRESS_TIER) --runs $(STRESS_RUNS) --parallel $(NPROC) --out artifacts/stress --table artifacts/stress/table.md --junit artifacts/stress/junit.xml

## swarm: SWARM_RUNS scenarios drawn from SWARM_SEED, bounded by SWARM_BUDGET,
## against MASTER (reference, or mooncake with MOONCAKE_MASTER=PATH) with the
## moves MOVES_OF can take (default: MASTER's); failures grouped by signature
## in artifacts/swarm/signatures.md, each shrunk with at most SWARM_SHRINK
## runs (0: none) and run again; then the gate
SWARM_SEED ?= 2026
SWARM_RUNS ?= 50
SWARM_BUDGET ?= 40m
SWARM_SHRINK ?= 0
MASTER ?= reference
MOVES_OF ?= $(MASTER)
swarm: $(CHAOS)
	@$(CHAOS) tools >/dev/null
	@rm -rf artifacts/swarm; mkdir -p artifacts/swarm
	@$(CHAOS) swarm --seed $(SWARM_SEED) --runs $(SWARM_RUNS) --budget $(SWARM_BUDGET) --master $(MASTER) --moves-of $(MOVES_OF) \
	  --shrink $(SWARM_SHRINK) $(if $(MOONCAKE_MASTER),--master-binary $(MOONCAKE_MASTER)) --out artifacts/swarm --junit artifacts/swarm/junit.xml; rc=$$?; \
	$(CHAOS) gate artifacts/swarm/*.tar.gz && exit $$rc

## mutants: every realistic bug of tests/mutants applied to a copy of the
## tree and run against the scenarios it names; fails unless a scenario
## kills each (MUTANTS=a,b for some); table in artifacts/mutants/results.md
MUTANTS ?=
mutants: $(CHAOS)
	@$(CHAOS) tools >/dev/null
	@$(CHAOS) mutants --out artifacts/mutants $(if $(MUTANTS),--only $(MUTANTS))

## upstream-chaos: scenarios/upstream against upstream's mooncake_master
## (MOONCAKE_MASTER=PATH: a mooncake_master of yours; docs/upstream.md says what it needs) and against
## the reference master, bundles in artifacts/upstream/<kind>, the verdicts
## side by side in artifacts/upstream/results.md; fails if either kind fails
upstream-chaos: $(CHAOS)
	@test -n "$(MOONCAKE_MASTER)" || { echo "make upstream-chaos: set MOONCAKE_MASTER=PATH to a mooncake_master (docs/upstream.md)"; exit 2; }
	@$(CHAOS) tools >/dev/null
	@if [ -d artifacts/upstream ]; then rm -rf artifacts/upstream-previous; mv artifacts/upstream artifacts/upstream-previous; \
	  echo "make upstream-chaos: the previous run's bundles are kept in artifacts/upstream-previous (one run back)"; fi
	@mkdir -p artifacts/upstream
	@start=$$(date +%s); 	$(CHAOS) run scenarios/upstream --master reference --parallel $(NPROC) --out artifacts/upstream/reference --junit artifacts/upstream/reference/junit.xml; ref=$$?; 	MOONCAKE_MASTER=$(MOONCAKE_MASTER) $(CHAOS) run scenarios/upstream --master mooncake --out artifacts/upstream/mooncake --junit artifacts/upstream/mooncake/junit.xml; up=$$?; 	$(CHAOS) compare reference=artifacts/upstream/reference/junit.xml mooncake=artifacts/upstream/mooncake/junit.xml --out artifacts/upstream/results.md; 	echo "make upstream-chaos: $$(( $$(date +%s) - start ))s, reference exit $$ref, mooncake exit $$up"; 	test $$ref -eq 0 -a $$up -eq 0

vet:
	@$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

## fuzz: every Fuzz target for FUZZTIME each (default 60s)
fuzz:
	@set -e; pkgs=$$($(GO) list ./...); n=0; \
	for pkg in $$pkgs; do \
	  fs=$$($(GO) test -list '^Fuzz' $$pkg) || { echo "fuzz: cannot list $$pkg"; exit 1; }; \
	  for f in $$(echo "$$fs" | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f ($(FUZZTIME))"; n=$$((n+1)); \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) $$pkg; \
	  done; \
	done; \
	test $$n -gt 0 || { echo "fuzz: no target found"; exit 1; }; echo "fuzz: $$n targets, $(FUZZTIME) each, no crash"

## bench: benchmarks against their baselines on real etcd and versitygw, each
## group in its own process; table in artifacts/bench/results.md (+ .json).
## BENCH_MASTERS="reference mooncake" (with MOONCAKE_MASTER) runs the WritePath
## and Failover groups against each kind, side by side in the one table
BENCH_GROUPS ?= Capture Pipeline,Recovery SuffixReplay EtcdCost HarnessBoot WritePath Failover StandbyLag Codec
BENCH_MASTERS ?= reference
bench: $(CHAOS)
	@$(CHAOS) tools
	@mkdir -p artifacts/bench; rm -f artifacts/bench/figures.jsonl artifacts/bench/figures.series.jsonl artifacts/bench/*.svg artifacts/bench/go-bench.txt
	@set -eo pipefail; start=$$(date +%s); \
	for g in $(BENCH_GROUPS); do \
	  masters=reference; case "$$g" in WritePath|Failover) masters="$(BENCH_MASTERS)";; esac; \
	  for m in $$masters; do \
	  echo "== bench $$g, master $$m ($$(( $$(date +%s) - start ))s so far)"; \
	  OPLOGHA_BENCH_MASTER=$$m OPLOGHA_BENCH_OUT=$(CURDIR)/artifacts/bench/figures.jsonl $(GO) test -run '^$$' -bench "^Benchmark($${g//,/|})$$" -benchtime 1x -timeout 30m -v ./tests/bench \
	    | tee -a artifacts/bench/go-bench.txt | grep -v -e '^=== ' -e '^goos' -e '^goarch' -e '^pkg:' -e '^cpu:'; \
	  done; \
	done; \
	$(CHAOS) bench-report --elapsed $$(( $$(date +%s) - start ))s

clean:
	rm -rf .cache artifacts/junit.xml artifacts/bench artifacts/*-seed* artifacts/.work
