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
# confined); agent-all (--approve all); pssh (the three commands joined);
# pssh-cm (three parallel-ssh runs through a ControlMaster per host,
# started before the recording: their client CPU is in it, their logins
# are not).
#
# Environment: AGENT, HOSTS (default 100), FORKS (default 50), NSSHD
# (default 4), TOOLS (default "agent agent-all pssh pssh-cm"), OUT (where the perf data is kept,
# default a temporary directory). Needs perf and root (or
# perf_event_paranoid ≤ -1). The machine is shared: a connection count
# other than HOSTS means someone else's logins are mixed in (said in the
# table); quote figures from runs without that, with the load average.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=$PWD/bench/fanout
if [ -z "${FANOUT_WORK:-}" ]; then
  command -v perf >/dev/null || { echo "cpu.sh: perf not found" >&2; exit 2; }
  export AGENT=${AGENT:-bin/agent} TOOLS=${TOOLS:-agent agent-all pssh pssh-cm} OUT=${OUT:-$(mktemp -d /tmp/fanout-cpu.XXXXXX)}
  [[ $AGENT = /* ]] || AGENT=$PWD/$AGENT
  export HOSTS=${HOSTS:-100} FORKS=${FORKS:-50} NSSHD=${NSSHD:-4}
  FANOUT_EXEC="bash $here/cpu.sh" exec bash "$here/run.sh"
fi
# Inside run.sh's set-up: the same commands as run.sh's run_tool.
W=$FANOUT_WORK
kernel=$(uname -r)
for tool in $TOOLS; do
  root=$W/files/cpu.$tool out=$W/out/cpu.$tool
  mkdir -p "$root" "$out"
  case $tool in
  agent | agent-all)
    bin=$AGENT approve=medium
    [ "$tool" = agent-all ] && approve=all
    cmd=("$AGENT" run "$here/plan.yaml" -i "$W/inventory.ini" --forks "$FORKS" --approve "$approve" --json --var root="$root") ;;
  pssh)
    bin=$(command -v parallel-ssh)
    cmd=(parallel-ssh -h "$W/hosts.txt" -p "$FORKS" -x "-F $FANOUT_CFG" -o "$out/o" -e "$out/e"
      "uname -r; df -h /; mkdir -p $root/\$PSSH_HOST && echo \$PSSH_HOST > $root/\$PSSH_HOST/f && cat $root/\$PSSH_HOST/f") ;;
  pssh-cm)
    bin=$(command -v parallel-ssh)
    mkdir -p "$W/cm"
    xargs -P "$FORKS" -I{} ssh -F "$FANOUT_CFG" -o BatchMode=yes -o SendEnv="PSSH_*" -o ControlMaster=yes \
      -o ControlPath="$W/cm/%n" -o ControlPersist=600 -Nf {} < "$W/hosts.txt"
    x="-F $FANOUT_CFG -o ControlMaster=no -o ControlPath=$W/cm/%n"
    cmd=(bash -c "parallel-ssh -h $W/hosts.txt -p $FORKS -x '$x' -o $out/o1 'uname -r' &&
      parallel-ssh -h $W/hosts.txt -p $FORKS -x '$x' -o $out/o2 'df -h /' &&
      parallel-ssh -h $W/hosts.txt -p $FORKS -x '$x' -o $out/o3 'mkdir -p $root/\$PSSH_HOST && echo \$PSSH_HOST > $root/\$PSSH_HOST/f && cat $root/\$PSSH_HOST/f'") ;;
  *) echo "cpu.sh: unknown tool $tool" >&2; exit 2 ;;
  esac
  load=$(cut -d' ' -f1 /proc/loadavg)
  perf record -q -a -e sched:sched_process_fork -e sched:sched_process_exec -e sched:sched_stat_runtime \
    -o "$OUT/$tool.data" -- "${cmd[@]}" > "$out/stdout" 2> "$out/stderr"
  "$W/check" files -hosts "$W/hosts.txt" -root "$root" >/dev/null
  case $tool in
  agent | agent-all) "$W/check" agent -hosts "$W/hosts.txt" -kernel "$kernel" "$out/stdout" >/dev/null ;;
  pssh) "$W/check" pssh -hosts "$W/hosts.txt" -kernel "$kernel" "$out/o" >/dev/null ;;
  pssh-cm)
    "$W/check" pssh3 -hosts "$W/hosts.txt" -kernel "$kernel" "$out/o1" "$out/o2" "$out/o3" >/dev/null
    xargs -P "$FORKS" -I{} ssh -F "$FANOUT_CFG" -o ControlPath="$W/cm/%n" -O exit {} < "$W/hosts.txt" 2>/dev/null || true ;;
  esac
  echo "== $tool, $HOSTS hosts checked, forks $FORKS, load $load at the start; perf data $OUT/$tool.data"
  python3 "$here/cputree.py" "$OUT/$tool.data" "$HOSTS" "$bin"
done
