#!/usr/bin/env bash
# Where the CPU of a fan-out run goes, per host (docs/bench.md, "where the
# CPU goes, host by host"): run.sh's set-up (the same sshd instances,
# aliases, keys and 3-step work), then for each tool one checked run under
# `perf record -a` of the scheduler's fork, exec and run-time events, and
# bench/fanout/cputree.py's table: the CPU of every process on the "hosts"
# (by its place under sshd) and on the controller, per host.
#
#   HOSTS=100 bash bench/fanout/cpu.sh          # every tool below
#   AGENT=/tmp/agent TOOLS=agent bash bench/fanout/cpu.sh
#
# The tools (as in run.sh): agent, its default mode (--approve medium:
# confined), on warm hosts (an unrecorded run of each agent tool first:
# WARMUP=0 skips it); agent-b, the same with another build (AGENT_B);
# agent-all (--approve all); agent-cm (the default mode through
# pssh-cm-warm's masters, started before the recording); pssh (the three
# commands joined); pssh-cm-warm (three parallel-ssh runs through a
# ControlMaster per host, started before the recording: their client CPU
# is in it, their logins are not; the sessions of a master's connection
# are counted as a connection's); pssh-cm (issue 31's peer: the same with
# ControlMaster=auto and ControlPersist, the first run making the masters:
# their logins are in it).
#
# Environment: AGENT, AGENT_B, HOSTS (default 100), FORKS (default 50), NSSHD
# (default 4), TOOLS (default "agent agent-all pssh pssh-cm-warm"; a tool named
# again is recorded again: "agent agent-b agent agent-b" alternates two
# builds), WARMUP, OUT (where the perf data is kept,
# default a temporary directory). Needs perf and root (or
# perf_event_paranoid ≤ -1). The machine is shared: a connection count
# other than HOSTS means someone else's logins are mixed in (said in the
# table); quote figures from runs without that, with the load average.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=$PWD/bench/fanout
if [ -z "${FANOUT_WORK:-}" ]; then
  command -v perf >/dev/null || { echo "cpu.sh: perf not found" >&2; exit 2; }
  export AGENT=${AGENT:-bin/agent} TOOLS=${TOOLS:-agent agent-all pssh pssh-cm-warm} OUT=${OUT:-$(mktemp -d /tmp/fanout-cpu.XXXXXX)}
  [[ $AGENT = /* ]] || AGENT=$PWD/$AGENT
  if [[ " $TOOLS " = *" agent-b "* ]]; then
    [ -x "${AGENT_B:-}" ] || { echo "cpu.sh: TOOLS has agent-b but AGENT_B (${AGENT_B:-}) is not an executable" >&2; exit 2; }
    [[ $AGENT_B = /* ]] || AGENT_B=$PWD/$AGENT_B
    export AGENT_B
  fi
  export HOSTS=${HOSTS:-100} FORKS=${FORKS:-50} NSSHD=${NSSHD:-4}
  FANOUT_EXEC="bash $here/cpu.sh" exec bash "$here/run.sh"
fi
# Inside run.sh's set-up: the same commands as run.sh's run_tool. perf
# records with -N: its build-id cache would go to $HOME/.debug, the
# hosts' home here, a change there making every later recorded session
# compile its rules again.
W=$FANOUT_WORK
kernel=$(uname -r)
start_masters() {
  mkdir -p "$W/cm"
  xargs -P "$FORKS" -I{} ssh -F "$FANOUT_CFG" -o BatchMode=yes -o SendEnv="PSSH_*" -o ControlMaster=yes \
    -o ControlPath="$W/cm/%n" -o ControlPersist=600 -Nf {} < "$W/hosts.txt"
}
warm=" "
n=0
for tool in $TOOLS; do
  n=$((n + 1))
  root=$W/files/cpu.$n.$tool out=$W/out/cpu.$n.$tool
  mkdir -p "$root" "$out"
  case $tool in
  agent | agent-b | agent-all)
    bin=$AGENT approve=medium
    [ "$tool" = agent-b ] && bin=$AGENT_B
    [ "$tool" = agent-all ] && approve=all
    cmd=("$bin" run "$here/plan.yaml" -i "$W/inventory.ini" --forks "$FORKS" --approve "$approve" --json --var root="$root")
    if [ "${WARMUP:-1}" != 0 ] && [[ $warm != *" $tool "* ]]; then
      mkdir -p "$W/files/warm.$tool"
      "${cmd[@]:0:${#cmd[@]}-2}" --var root="$W/files/warm.$tool" > /dev/null 2>&1 || { echo "cpu.sh: $tool's warm-up run failed" >&2; exit 1; }
      warm="$warm$tool "
    fi ;;
  pssh)
    bin=$(command -v parallel-ssh)
    cmd=(parallel-ssh -h "$W/hosts.txt" -p "$FORKS" -x "-F $FANOUT_CFG" -o "$out/o" -e "$out/e"
      "uname -r; df -h /; mkdir -p $root/\$PSSH_HOST && echo \$PSSH_HOST > $root/\$PSSH_HOST/f && cat $root/\$PSSH_HOST/f") ;;
  agent-cm) # the default mode through pssh-cm-warm's masters (run.sh's agent-cm)
    bin=$AGENT
    start_masters
    cmd=("$AGENT" run "$here/plan.yaml" -i "$W/inventory.ini" -F "$W/cm.config" --forks "$FORKS" --approve medium --json --var root="$root")
    if [ "${WARMUP:-1}" != 0 ] && [[ $warm != *" agent "* ]]; then
      mkdir -p "$W/files/warm.agent"
      "${cmd[@]:0:${#cmd[@]}-2}" --var root="$W/files/warm.agent" > /dev/null 2>&1 || { echo "cpu.sh: $tool's warm-up run failed" >&2; exit 1; }
      warm="$warm$tool agent "
    fi ;;
  pssh-cm | pssh-cm-warm)
    bin=$(command -v parallel-ssh)
    x="-F $FANOUT_CFG -o ControlMaster=auto -o ControlPath=$W/cm/%n -o ControlPersist=600 -o SendEnv=PSSH_*"
    if [ "$tool" = pssh-cm-warm ]; then
      start_masters
      x="-F $FANOUT_CFG -o ControlMaster=no -o ControlPath=$W/cm/%n"
    fi
    mkdir -p "$W/cm"
    cmd=(bash -c "parallel-ssh -h $W/hosts.txt -p $FORKS -x '$x' -o $out/o1 'uname -r' &&
      parallel-ssh -h $W/hosts.txt -p $FORKS -x '$x' -o $out/o2 'df -h /' &&
      parallel-ssh -h $W/hosts.txt -p $FORKS -x '$x' -o $out/o3 'mkdir -p $root/\$PSSH_HOST && echo \$PSSH_HOST > $root/\$PSSH_HOST/f && cat $root/\$PSSH_HOST/f'") ;;
  *) echo "cpu.sh: unknown tool $tool" >&2; exit 2 ;;
  esac
  load=$(cut -d' ' -f1 /proc/loadavg)
  perf record -q -N -a -e sched:sched_process_fork -e sched:sched_process_exec -e sched:sched_stat_runtime \
    -o "$OUT/$n.$tool.data" -- "${cmd[@]}" > "$out/stdout" 2> "$out/stderr"
  "$W/check" files -hosts "$W/hosts.txt" -root "$root" >/dev/null
  case $tool in
  agent | agent-b | agent-all | agent-cm) "$W/check" agent -hosts "$W/hosts.txt" -kernel "$kernel" "$out/stdout" >/dev/null ;;
  pssh) "$W/check" pssh -hosts "$W/hosts.txt" -kernel "$kernel" "$out/o" >/dev/null ;;
  pssh-cm | pssh-cm-warm)
    "$W/check" pssh3 -hosts "$W/hosts.txt" -kernel "$kernel" "$out/o1" "$out/o2" "$out/o3" >/dev/null ;;
  esac
  case $tool in
  pssh-cm | pssh-cm-warm | agent-cm) xargs -P "$FORKS" -I{} ssh -F "$FANOUT_CFG" -o ControlPath="$W/cm/%n" -O exit {} < "$W/hosts.txt" 2>/dev/null || true ;;
  esac
  echo "== $tool, $HOSTS hosts checked, forks $FORKS, load $load at the start; perf data $OUT/$n.$tool.data"
  python3 "$here/cputree.py" "$OUT/$n.$tool.data" "$HOSTS" "$bin"
done
