#!/usr/bin/env bash
# The scale curve of issue 15 §4 (docs/bench.md): the 3-step plan on 100,
# 500 and 2,000 inventory hosts with --forks 200, agent's wall time, CPU,
# peak RSS and open descriptors — agent in its default mode (confined,
# --approve medium) on a fresh fleet and warm, and with --approve all —
# with parallel-ssh (-p 200) plain and through ControlMasters at 100 and
# 500 hosts and Ansible (-f 200) at 500 in the same run (run.sh's tools). Each size starts its own
# loopback sshd instances (bench/fanout/run.sh); every timed run is checked
# host by host. The load average and the machine's idle share are recorded
# with every run: the machine is shared, quote medians and same-run ratios.
#
#   bash bench/fanout/scale.sh                 # RUNS=3 (2,000 hosts: RUNS2K=1)
#   RUNS=5 RUNS2K=3 SIZES="100 500 2000" bash bench/fanout/scale.sh
#
# Environment: AGENT (default bin/agent), RUNS (runs at 100 and 500 hosts,
# default 3), RUNS2K (runs at 2,000 hosts, default 1), SIZES (default
# "100 500 2000"), ANSIBLE=0 leaves Ansible out, NSSHD (default 8), RESULTS
# (the file of per-run lines, default bench/results/scale-DATE.txt);
# SPLIT=1 and WARMUP=0 are passed on to run.sh (see there).
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3}
RUNS2K=${RUNS2K:-1}
SIZES=${SIZES:-100 500 2000}
mkdir -p bench/results
export RESULTS=${RESULTS:-$PWD/bench/results/scale-$(date -u +%Y%m%dT%H%M%SZ).txt}
export AGENT=${AGENT:-bin/agent} FORKS=200 MEM=0 NSSHD=${NSSHD:-8}
for n in $SIZES; do
  tools="agent-first agent agent-all pssh pssh-cm pssh-cm-warm" runs=$RUNS once=
  case $n in
  500) [ "${ANSIBLE:-1}" = 1 ] && tools="$tools ansible" once=ansible ;;
  2000) tools="agent agent-all" runs=$RUNS2K ;;
  esac
  echo "== $n hosts: $tools, forks $FORKS, $runs run(s)"
  HOSTS=$n TOOLS=$tools RUNS=$runs ONCE=$once bash bench/fanout/run.sh
done
echo "per-run lines: $RESULTS"
