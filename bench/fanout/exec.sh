#!/usr/bin/env bash
# `agent exec -i` against parallel-ssh (issue 29): one command on HOSTS
# inventory hosts, FORKS at a time, against the same OpenSSH sshd
# instances (bench/fanout/run.sh's set-up), interleaved (the order of the
# two tools alternates each round), an untimed checked warm-up, RUNS timed
# rounds, medians. Every run is checked host by host: agent's output of the
# command (--json) must equal parallel-ssh's (check exec).
#
#   bash bench/fanout/exec.sh          # uses bin/agent (make build)
#   RUNS=5 HOSTS=100 CMD='uptime -s' bash bench/fanout/exec.sh
#
# agent exec -i classifies the command as a one-step plan: the default
# command is safe, so it runs unattended, confined by the kernel (the
# launcher kept on the hosts after the warm-up), journaled and audited.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "${1:-}" = inner ]; then
  inv=$FANOUT_WORK/inventory.ini hosts=$FANOUT_WORK/hosts.txt cfg=$FANOUT_CFG
  go build -o "$FANOUT_WORK/check-exec" ./bench/fanout/check
  results=$FANOUT_WORK/exec-results
  : > "$results"
  one() { # one TOOL ROUND
    local tool=$1 round=$2 out=$FANOUT_WORK/exec/$2/$1 t0 t1
    mkdir -p "$out"
    t0=$(date +%s.%N)
    case $tool in
    agent) "$AGENT_BIN" exec -i "$inv" --forks "$FORKS" --json -- "$CMD" > "$out/stdout" 2> "$out/stderr" ;;
    pssh) parallel-ssh -h "$hosts" -p "$FORKS" -x "-F $cfg" -o "$out/o" -e "$out/e" "$CMD" > "$out/stdout" 2> "$out/stderr" ;;
    esac
    t1=$(date +%s.%N)
    [ "$round" = 0 ] || echo "$tool $(echo "$t1 - $t0" | bc -l) $(cut -d' ' -f1 /proc/loadavg)" >> "$results"
  }
  for round in $(seq 0 "$RUNS"); do
    if [ $((round % 2)) = 0 ]; then one agent "$round"; one pssh "$round"; else one pssh "$round"; one agent "$round"; fi
    "$FANOUT_WORK/check-exec" exec -hosts "$hosts" "$FANOUT_WORK/exec/$round/agent/stdout" "$FANOUT_WORK/exec/$round/pssh/o" ||
      { echo "exec: round $round: agent's results differ from parallel-ssh's" >&2; exit 1; }
  done
  python3 - "$results" "$HOSTS" "$FORKS" "$CMD" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
t = {k: [float(r[1]) for r in rows if r[0] == k] for k in ("agent", "pssh")}
load = [float(r[2]) for r in rows]
a, p = statistics.median(t["agent"]), statistics.median(t["pssh"])
print(f"== agent exec -i vs parallel-ssh: {sys.argv[4]!r} on {sys.argv[2]} hosts, forks {sys.argv[3]}, {len(t['agent'])} rounds, load {min(load):.2f}-{max(load):.2f}")
print(f"agent exec -i  median {a:.3f}s  (runs {' '.join(f'{x:.3f}' for x in t['agent'])})")
print(f"parallel-ssh   median {p:.3f}s  (runs {' '.join(f'{x:.3f}' for x in t['pssh'])})")
print(f"agent/pssh = {a / p:.2f}x (every host's output equal in every round)")
PY
  exit
fi
AGENT=${AGENT:-bin/agent}
[[ $AGENT = /* ]] || AGENT=$PWD/$AGENT
[ -x "$AGENT" ] || { echo "exec: $AGENT not found (make build)" >&2; exit 2; }
command -v parallel-ssh >/dev/null || { echo "exec: parallel-ssh not found (install pssh)" >&2; [ "${CI:-}" = true ] && exit 1; exit 0; }
command -v bc >/dev/null || { echo "exec: bc not found (install bc)" >&2; exit 2; }
export AGENT_BIN=$AGENT RUNS=${RUNS:-3} FORKS=${FORKS:-50} HOSTS=${HOSTS:-100} CMD=${CMD:-'uname -r; id -un; ls /etc/ssh'}
MEM=0 FANOUT_EXEC="bash bench/fanout/exec.sh inner" bash bench/fanout/run.sh
