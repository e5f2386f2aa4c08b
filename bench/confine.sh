#!/usr/bin/env bash
# The cost of the kernel's confinement (issue 13 §1, docs/bench.md):
#   1. per step locally: BenchmarkLocalStep (package confine), `true` as a
#      step unconfined, on a confined thread, with the sandbox stacked, and
#      through agent-launch, in pairs in one loop (target ≤ 1 ms a step);
#   2. over SSH, the fan-out benchmark (bench/fanout/run.sh) in its default
#      mode (--approve medium: every step confined to its level) on a
#      fresh fleet and warm, beside --approve all (unconfined), parallel-ssh
#      and parallel-ssh through ControlMasters (made in the run and before
#      the timer), in one run.
#
#   bash bench/confine.sh           # uses bin/agent (make build)
#   RUNS=5 HOSTS=100 bash bench/confine.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
AGENT=${AGENT:-bin/agent}
[[ $AGENT = /* ]] || AGENT=$repo/$AGENT
export RUNS=${RUNS:-3} MEM=0

echo "== per step, locally (load $(cut -d' ' -f1 /proc/loadavg))"
go test -run '^$' -bench BenchmarkLocalStep -benchtime 200x -count "${RUNS}" ./confine/

echo "== fan-out: the default mode (confined), fresh and warm, beside unconfined and pssh"
TOOLS="agent-first agent agent-all pssh pssh-cm pssh-cm-warm" AGENT=$AGENT bash bench/fanout/run.sh
