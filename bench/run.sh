#!/usr/bin/env bash
# make bench: agent's SSH transport against OpenSSH on the same sshd, in the
# same run. Ratios, not absolute times, are what to quote: machines are noisy.
# Runs itself inside testenv's testhost -sshd (a real sshd on loopback, with
# an operator HOME whose ~/.ssh/config names it "vub").
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${TESTHOST_ALIAS:-}" ]; then
  go build -o bin/transportbench ./bench/transportbench
  exec go run ./testenv/cmd/testhost -sshd -- bash bench/run.sh
fi
host=$TESTHOST_ALIAS
cfg=$HOME/.ssh/config # OpenSSH takes ~ from passwd, not $HOME: name the file
tb=bin/transportbench
work=$(mktemp -d /tmp/agent-bench.XXXXXX)
trap 'ssh -F "$cfg" -O exit -o ControlPath="$work/cm" "$host" 2>/dev/null || true; rm -rf "$work"' EXIT
now() { date +%s.%N; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }

STEPS=${STEPS:-200}
SIZE_MIB=${SIZE_MIB:-256}
echo "== step latency: $STEPS × true over one connection"
ssh -F "$cfg" -o ControlMaster=auto -o ControlPath="$work/cm" -o ControlPersist=60 "$host" true # master up
t0=$(now)
for _ in $(seq "$STEPS"); do
  ssh -F "$cfg" -o ControlMaster=auto -o ControlPath="$work/cm" -o ControlPersist=60 "$host" true
done
ssh_s=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }')
agent_s=$($tb -host "$host" -mode steps -n "$STEPS" | field seconds)
echo "openssh (ControlMaster) ${ssh_s}s  agent ${agent_s}s  ratio agent/openssh = $(ratio "$agent_s" "$ssh_s")  (target ≤ 0.25)"

echo "== transfer: $SIZE_MIB MiB upload and download"
head -c $((SIZE_MIB << 20)) /dev/urandom > "$work/blob"
t0=$(now); scp -F "$cfg" -q "$work/blob" "$host:$work/scp-up"; scp_up=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }')
t0=$(now); scp -F "$cfg" -q "$host:$work/scp-up" "$work/scp-down"; scp_down=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }')
rm -f "$work/scp-down"
agent_up=$($tb -host "$host" -mode upload -file "$work/blob" -remote "$work/agent-up" | field seconds)
cmp -s "$work/blob" "$work/agent-up" || { echo "upload corrupted the file" >&2; exit 1; }
agent_down=$($tb -host "$host" -mode download -file "$work/agent-up" | field seconds)
echo "upload:   scp ${scp_up}s  agent ${agent_up}s  throughput agent/scp = $(ratio "$scp_up" "$agent_up")  (target ≥ 1.0)"
echo "download: scp ${scp_down}s  agent ${agent_down}s  throughput agent/scp = $(ratio "$scp_down" "$agent_down")  (target ≥ 1.0)"

echo "== memory: a command printing 1 GiB"
line=$($tb -host "$host" -mode output -size $((1 << 30)))
rss=$(echo "$line" | field maxrss_kib)
echo "peak RSS ${rss} KiB = $((rss / 1024)) MiB for 1 GiB of output in $(echo "$line" | field seconds)s  (target < 64 MiB)"
