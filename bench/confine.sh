#!/usr/bin/env bash
# The cost of the kernel's confinement (issue 13 §1, docs/bench.md):
#   1. per step locally: BenchmarkLocalStep (package confine), `true` as a
#      step unconfined, on a confined thread, with the sandbox stacked, and
#      through agent-launch, in pairs in one loop (target ≤ 1 ms a step);
#   2. over SSH, the fan-out benchmark (bench/fanout/run.sh) with its plan
#      run confined (--approve medium: safe steps read-only, the medium
#      step held from the protected files; the launcher sent to each host
#      for the run and removed at its end, the default), again with
#      --keep-launcher (kept on the hosts between runs: the warm-up run
#      leaves it there), and unconfined (--approve all), each against
#      parallel-ssh in the
#      same run: the ratios agent/pssh, and how much the confined one moved
#      (target: within 10%).
#
#   bash bench/confine.sh           # uses bin/agent (make build)
#   RUNS=5 HOSTS=100 bash bench/confine.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
AGENT=${AGENT:-bin/agent}
[[ $AGENT = /* ]] || AGENT=$repo/$AGENT
export RUNS=${RUNS:-3} MEM=0 TOOLS="agent pssh"

echo "== per step, locally (load $(cut -d' ' -f1 /proc/loadavg))"
go test -run '^$' -bench BenchmarkLocalStep -benchtime 200x -count "${RUNS}" ./confine/

ratio() { # ratio FILE: agent/pssh from the fan-out summary
  sed -n 's/.*agent\/pssh *= *\([0-9.]*\)×.*/\1/p' "$1" | tail -1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== fan-out, unconfined (--approve all)"
AGENT=$AGENT bash bench/fanout/run.sh | tee "$tmp/all"
echo "== fan-out, confined (--approve medium)"
AGENT_REAL=$AGENT AGENT=$repo/bench/confine/agent-medium bash bench/fanout/run.sh | tee "$tmp/medium"
echo "== fan-out, confined (--approve medium --keep-launcher)"
KEEP_LAUNCHER=1 AGENT_REAL=$AGENT AGENT=$repo/bench/confine/agent-medium bash bench/fanout/run.sh | tee "$tmp/keep"
a=$(ratio "$tmp/all") m=$(ratio "$tmp/medium") k=$(ratio "$tmp/keep")
if [ -n "$a" ] && [ -n "$m" ] && [ -n "$k" ]; then
  awk -v a="$a" -v m="$m" -v k="$k" 'BEGIN { printf "confinement over SSH: agent/pssh %.2f× unconfined, %.2f× confined (launcher sent each run): %+.0f%%, %.2f× confined with --keep-launcher: %+.0f%% (target within 10%%)\n", a, m, 100 * (m - a) / a, k, 100 * (k - a) / a }'
fi
