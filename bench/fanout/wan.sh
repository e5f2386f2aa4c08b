#!/usr/bin/env bash
# The fan-out benchmark with the hosts far away (issue 31's WAN run): the
# sshd instances of bench/fanout/run.sh run in a network namespace joined
# to this one by bench/wanline, a TUN delay line (this kernel has no
# netem), DELAY each way (default 10ms: a 20 ms round trip). Every tool of
# run.sh reaches the hosts through it; the rest of run.sh is unchanged.
# Root only (ip netns, TUN devices).
#
#   sudo bash bench/fanout/wan.sh                    # uses bin/agent
#   DELAY=25ms RUNS=5 TOOLS="agent pssh" bash bench/fanout/wan.sh
#
# Environment: DELAY, and everything run.sh takes (TOOLS defaults to the
# default mode first and warm, --approve all, pssh joined, pssh through
# ControlMasters made in the run (pssh-cm, issue 31's peer) and made before
# the timer (pssh-cm-warm), and Ansible without facts; MEM=0).
set -euo pipefail
cd "$(dirname "$0")/../.."
DELAY=${DELAY:-10ms}
if [ "$(id -u)" != 0 ]; then echo "wan: needs root (ip netns, TUN devices)" >&2; exit 2; fi
command -v ip >/dev/null || { echo "wan: ip not found (install iproute2)" >&2; exit 2; }
tmp=$(mktemp -d /tmp/fanout-wan.XXXXXX)
ns=agentwan$$
wl=
cleanup() {
  set +e
  [ -n "$wl" ] && kill "$wl" && wait "$wl" 2>/dev/null
  ip netns del "$ns" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
go build -o "$tmp/wanline" ./bench/wanline
ip netns add "$ns"
"$tmp/wanline" -netns "$ns" -delay "$DELAY" -local 198.18.0.1 -remote 198.18.0.2 > "$tmp/wanline.out" 2>&1 &
wl=$!
for _ in $(seq 1 100); do
  grep -q '^ready' "$tmp/wanline.out" && break
  kill -0 "$wl" 2>/dev/null || { echo "wan: wanline failed:" >&2; cat "$tmp/wanline.out" >&2; exit 1; }
  sleep 0.05
done
rtt=$(python3 - <<'PY'
import socket, statistics, time
s = socket.socket(); s.bind(("198.18.0.1", 0))
ts = []
for _ in range(5):
    c = socket.socket(); t = time.time()
    try: c.connect(("198.18.0.2", 9))  # refused: one round trip
    except OSError: pass
    ts.append((time.time() - t) * 1000); c.close()
print("%.1f" % statistics.median(ts))
PY
)
echo "wan: hosts in network namespace $ns at 198.18.0.2, ${DELAY} each way (a refused connect: ${rtt} ms)"
HOSTS_NETNS=$ns HOSTS_ADDR=198.18.0.2 MEM=${MEM:-0} \
  TOOLS=${TOOLS:-agent-first agent agent-all pssh pssh-cm pssh-cm-warm ansible} \
  bash bench/fanout/run.sh
