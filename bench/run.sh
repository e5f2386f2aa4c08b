#!/usr/bin/env bash
# make bench: `agent run` against OpenSSH on the same sshd, in the same run
# (issue 31 §2). Rounds are interleaved — ssh, then agent, then ssh … — so
# that load from other jobs hits both alike, and medians are compared;
# each round's load average is printed. Ratios, not absolute times, are
# what to quote: machines are noisy. Runs itself inside testenv's testhost
# -sshd (a real sshd on loopback, with an operator HOME whose
# ~/.ssh/config names it "vub").
#
#   1. steps: a plan of STEPS `true` steps through `agent run --ssh-host`
#      (agent's default: the steps are safe, so confined, and nothing
#      approved), against STEPS `ssh host true` through a warm ControlMaster.
#      agent's marginal step is (plan of STEPS − plan of 1) / (STEPS − 1),
#      its whole run per step is also printed (it carries the connection
#      and the confinement set-up).
#   2. local step: the same plans without --ssh-host, against a shell loop
#      of STEPS `sh -c true`; agent's marginal local step.
#   3. transfers: SIZE_MIB of random bytes up and down with `agent run`'s
#      upload_file and download_file (--approve all --allow-write WORK: a
#      transfer is not safe, a download writes outside the working directory
#      by default), against scp; every copy is checked with cmp.
#   4. memory: transportbench, a command printing 1 GiB (the transport).
#
#   bash bench/run.sh             # bin/agent; STEPS=200 ROUNDS=5 SIZE_MIB=256
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${TESTHOST_ALIAS:-}" ]; then
  go build -o bin/transportbench ./bench/transportbench
  exec go run ./testenv/cmd/testhost -sshd -- bash bench/run.sh
fi
host=$TESTHOST_ALIAS
cfg=$HOME/.ssh/config # OpenSSH takes ~ from passwd, not $HOME: name the file
AGENT=${AGENT:-bin/agent}
[[ $AGENT = /* ]] || AGENT=$PWD/$AGENT
tb=bin/transportbench
STEPS=${STEPS:-200}
ROUNDS=${ROUNDS:-5}
SIZE_MIB=${SIZE_MIB:-256}
work=$(mktemp -d /tmp/agent-bench.XXXXXX)
trap 'ssh -F "$cfg" -O exit -o ControlPath="$work/cm" "$host" 2>/dev/null || true; rm -rf "$work"' EXIT
export XDG_STATE_HOME=$work/state CI=true
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.4f", b - a }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
load() { cut -d' ' -f1 /proc/loadavg; }
median() { sort -g | awk '{ v[NR] = $1 } END { printf "%.4f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }

plan() { # plan N FILE: N steps of `true`
  { echo "name: steps"; echo "steps:"
    for _ in $(seq "$1"); do printf '  - tool: execute_command\n    parameters: {command: "true"}\n'; done; } > "$2"
}
# agent_run PLAN [FLAG…]: one checked `agent run` on the host.
agent_run() {
  local p=$1; shift
  "$AGENT" run "$p" --ssh-host "$host" -F "$cfg" --json "$@" > "$work/out" 2> "$work/err" ||
    { echo "bench: agent run $p failed:" >&2; tail -5 "$work/err" >&2; tail -3 "$work/out" >&2; exit 1; }
  tail -1 "$work/out" | grep -q '"event":"done".*"status":"success"' ||
    { echo "bench: agent run $p did not succeed: $(tail -1 "$work/out")" >&2; exit 1; }
}

echo "== step latency: $STEPS × true, $ROUNDS interleaved rounds"
plan "$STEPS" "$work/steps.yaml"
plan 1 "$work/one.yaml"
ssh -F "$cfg" -o ControlMaster=auto -o ControlPath="$work/cm" -o ControlPersist=600 "$host" true # master up
agent_run "$work/one.yaml" # warm: the launcher is kept on the host after a first run
: > "$work/ssh.t"; : > "$work/agent.t"; : > "$work/one.t"
for r in $(seq "$ROUNDS"); do
  l=$(load)
  t0=$(now)
  for _ in $(seq "$STEPS"); do
    ssh -F "$cfg" -o ControlMaster=auto -o ControlPath="$work/cm" "$host" true
  done
  s=$(since "$t0"); echo "$s" >> "$work/ssh.t"
  t0=$(now); agent_run "$work/steps.yaml"; a=$(since "$t0"); echo "$a" >> "$work/agent.t"
  t0=$(now); agent_run "$work/one.yaml"; o=$(since "$t0"); echo "$o" >> "$work/one.t"
  echo "  round $r: ssh ${s}s  agent ${a}s  agent (1 step) ${o}s  load $l"
done
s=$(median < "$work/ssh.t") a=$(median < "$work/agent.t") o=$(median < "$work/one.t")
awk -v s="$s" -v a="$a" -v o="$o" -v n="$STEPS" 'BEGIN {
  m = (a - o) / (n - 1); c = s / n
  printf "medians: ssh ControlMaster %.2f ms/command; agent run %.2f ms/step whole (%.3f× ssh), marginal %.2f ms/step (%.3f× ssh; target ≤ 0.25)\n", 1000 * c, 1000 * a / n, (a / n) / c, 1000 * m, m / c }'

echo "== local step: $STEPS × true on this machine, $ROUNDS interleaved rounds"
# agent run without --ssh-host (confined, nothing approved) against a shell
# loop forking and executing the same command (sh -c true: agent runs a
# step's command through sh too). agent's marginal step is (plan of STEPS
# − plan of 1) / (STEPS − 1).
local_run() {
  "$AGENT" run "$1" --json > "$work/out" 2> "$work/err" ||
    { echo "bench: agent run $1 (local) failed:" >&2; tail -5 "$work/err" >&2; exit 1; }
  tail -1 "$work/out" | grep -q '"event":"done".*"status":"success"' ||
    { echo "bench: local agent run $1 did not succeed: $(tail -1 "$work/out")" >&2; exit 1; }
}
local_run "$work/one.yaml" # warm
: > "$work/lsh.t"; : > "$work/lagent.t"; : > "$work/lone.t"
for r in $(seq "$ROUNDS"); do
  l=$(load)
  t0=$(now); for _ in $(seq "$STEPS"); do sh -c true; done; s=$(since "$t0"); echo "$s" >> "$work/lsh.t"
  t0=$(now); local_run "$work/steps.yaml"; a=$(since "$t0"); echo "$a" >> "$work/lagent.t"
  t0=$(now); local_run "$work/one.yaml"; o=$(since "$t0"); echo "$o" >> "$work/lone.t"
  echo "  round $r: sh loop ${s}s  agent ${a}s  agent (1 step) ${o}s  load $l"
done
s=$(median < "$work/lsh.t") a=$(median < "$work/lagent.t") o=$(median < "$work/lone.t")
awk -v s="$s" -v a="$a" -v o="$o" -v n="$STEPS" 'BEGIN {
  m = (a - o) / (n - 1); c = s / n
  printf "medians: shell loop %.2f ms/command; agent run local marginal %.2f ms/step (%.2f× the loop; target ≤ 1.5 ms and ≤ 1.5×)\n", 1000 * c, 1000 * m, m / c }'

echo "== transfer: $SIZE_MIB MiB upload and download, $ROUNDS interleaved rounds (agent run --approve all)"
head -c $((SIZE_MIB << 20)) /dev/urandom > "$work/blob"
cat > "$work/up.yaml" <<PLAN
name: up
steps:
  - tool: upload_file
    parameters: {local_path: "$work/blob", remote_path: "$work/agent-up"}
PLAN
cat > "$work/down.yaml" <<PLAN
name: down
steps:
  - tool: download_file
    parameters: {remote_path: "$work/agent-up", local_path: "$work/agent-down"}
PLAN
for f in scp-up scp-down agent-up agent-down; do : > "$work/$f.t"; done
for r in $(seq "$ROUNDS"); do
  l=$(load)
  rm -f "$work/scp-up" "$work/scp-down" "$work/agent-up" "$work/agent-down"
  t0=$(now); scp -F "$cfg" -q "$work/blob" "$host:$work/scp-up"; su=$(since "$t0")
  t0=$(now); agent_run "$work/up.yaml" --approve all --allow-write "$work"; au=$(since "$t0")
  t0=$(now); scp -F "$cfg" -q "$host:$work/scp-up" "$work/scp-down"; sd=$(since "$t0")
  t0=$(now); agent_run "$work/down.yaml" --approve all --allow-write "$work"; ad=$(since "$t0")
  for f in scp-up scp-down agent-up agent-down; do
    cmp -s "$work/blob" "$work/$f" || { echo "bench: $f is not the file sent" >&2; exit 1; }
  done
  echo "$su" >> "$work/scp-up.t"; echo "$sd" >> "$work/scp-down.t"
  echo "$au" >> "$work/agent-up.t"; echo "$ad" >> "$work/agent-down.t"
  echo "  round $r: upload scp ${su}s agent ${au}s; download scp ${sd}s agent ${ad}s  load $l"
done
su=$(median < "$work/scp-up.t") sd=$(median < "$work/scp-down.t")
au=$(median < "$work/agent-up.t") ad=$(median < "$work/agent-down.t")
echo "upload:   medians scp ${su}s  agent ${au}s  throughput agent/scp = $(ratio "$su" "$au")  (target ≥ 1.2; checked by cmp)"
echo "download: medians scp ${sd}s  agent ${ad}s  throughput agent/scp = $(ratio "$sd" "$ad")  (target ≥ 1.2; checked by cmp)"
rm -f "$work/blob" "$work/scp-up" "$work/scp-down" "$work/agent-up" "$work/agent-down"

echo "== memory: a command printing 1 GiB (load $(load))"
line=$($tb -host "$host" -mode output -size $((1 << 30)))
rss=$(echo "$line" | field maxrss_kib)
echo "peak RSS ${rss} KiB = $((rss / 1024)) MiB for 1 GiB of output in $(echo "$line" | field seconds)s  (target < 64 MiB)"
