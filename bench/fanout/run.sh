#!/usr/bin/env bash
# Fan-out benchmark (issue 5, docs/bench.md): a 3-step plan over 100
# inventory hosts with 50 at a time, run by agent, by ansible-playbook -f 50
# (pipelining on; facts gathered and not) and by parallel-ssh -p 50, all
# against the same real OpenSSH sshd instances on loopback, in one run. Then
# agent's peak RSS with 500 hosts selected.
#
# agent runs as a user gets it without a terminal (issue 31): the plan's
# third step is medium, so `--approve medium` is the least that runs it,
# and every step is confined to its level by the kernel (the launcher
# kept on the hosts or sent, as agent's defaults say). The tools:
#   agent        that default mode, on hosts agent has run on before (warm)
#   agent-first  the same on a fresh fleet: the hosts' agent state
#                directory ($XDG_STATE_HOME on the hosts, a directory of
#                this run's) is emptied before each run, untimed
#   agent-all    --approve all: every step unconfined
#   agent-text   the default mode's terminal view, logs in --out
#   agent-b      the default mode with another build (AGENT_B)
#   agent-cm     the default mode through the same ControlMasters
#                pssh-cm-warm uses (ControlPath in agent's ssh config, -F),
#                made before the timer: no login of agent's own; the
#                masters' client CPU is not counted
#   pssh         parallel-ssh, the three commands joined: one login a host
#   pssh3        parallel-ssh three times: three logins a host
#   pssh-cm      issue 31's peer: parallel-ssh three times with
#                ControlMaster=auto and ControlPersist, no master before
#                the timer: the first invocation's ssh makes each host's
#                master, so its login is in the wall and the sshd CPU, and
#                in the tool's CPU (ssh logs in before it puts the master
#                in the background; what the backgrounded master does
#                after is not counted); the masters are stopped after the
#                run, untimed
#   pssh-cm-warm parallel-ssh three times through a ControlMaster per host
#                started (and their logins made) before the timer, with
#                SendEnv=PSSH_* (a master passes on only what it sends);
#                the masters' use in the run is in the sshd CPU, their
#                logins and their own client CPU are not
#   ansible, ansible-facts   ansible-playbook, pipelining, facts or not
# AGENT_FLAGS adds flags to every agent run (e.g. --ephemeral).
#
#   bash bench/fanout/run.sh            # uses bin/agent (make build)
#   AGENT=/tmp/agent-bench RUNS=5 bash bench/fanout/run.sh
#
# Environment: AGENT (binary, default bin/agent), RUNS (timed runs of each
# tool, default 3; min and median are reported), TOOLS (subset of: agent
# agent-first agent-all agent-text agent-b agent-cm pssh pssh3 pssh-cm
# pssh-cm-warm ansible ansible-facts; default all but agent-b and
# agent-cm), HOSTS (inventory hosts, default 100), FORKS (hosts at a time, default 50), NSSHD (sshd instances,
# default 4), MEM=0 skips the 500-host memory run, KEEP=1 keeps the work
# directory, RESULTS=FILE appends one line per timed run there, ONCE (tools
# timed in the first round only: Ansible over 500 hosts takes minutes),
# FANOUT_EXEC=COMMAND runs COMMAND in the set-up instead (see below).
# WARMUP=0 skips the untimed warm-up run of each tool (but Ansible).
# AGENT_B=BINARY adds the tool agent-b (put it in TOOLS): the same command
# as agent with another build, for a before/after figure in one run.
# SPLIT=1 pins the sshd instances (and so every connection and command on
# the "hosts") to CPU 1 and the tool (with its children) to CPU 0, as if
# the hosts were other machines: the tool no longer waits for the hosts'
# CPU, nor they for its (other jobs on the machine still share both).
# bench/fanout/scale.sh runs the scale curve (100, 500, 2,000 hosts) with it.
# HOSTS_NETNS=NAME HOSTS_ADDR=ADDR run the sshd instances in the network
# namespace NAME, listening on ADDR (bench/fanout/wan.sh: a namespace
# behind a delay line, as if the hosts were far away).
#
# Every timed run is checked (bench/fanout/check): each host's file exists
# with the right content and each tool collected the three outputs of every
# host; a run that did not do the work on every host fails the benchmark,
# and so does an agent run whose results differ on any host from pssh's of
# the same round (check same).
# Quote ratios, not times: the machine is shared and noisy.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
here=$repo/bench/fanout

AGENT=${AGENT:-bin/agent}
RUNS=${RUNS:-3}
TOOLS=${TOOLS:-agent-first agent agent-all agent-text pssh pssh3 pssh-cm pssh-cm-warm ansible ansible-facts}
AGENT_FLAGS=${AGENT_FLAGS:-}
NSSHD=${NSSHD:-4}
MEM=${MEM:-1}
FORKS=${FORKS:-50}
HOSTS=${HOSTS:-100}
SSHD=${SSHD:-/usr/sbin/sshd}
SPLIT=${SPLIT:-0}
HOSTS_NETNS=${HOSTS_NETNS:-}
HOSTS_ADDR=${HOSTS_ADDR:-127.0.0.1}
in_netns=()
[ -z "$HOSTS_NETNS" ] || in_netns=(ip netns exec "$HOSTS_NETNS")
pin_hosts=() pin_tool=()
if [ "$SPLIT" = 1 ]; then
  if [ "$(nproc)" -lt 2 ] || ! command -v taskset >/dev/null; then
    echo "fanout: SPLIT=1 needs 2 CPUs and taskset" >&2; exit 2
  fi
  pin_hosts=(taskset -c 1) pin_tool=(taskset -c 0)
fi

# A missing peer is left out with a message, or fails the run when CI=true.
missing() {
  if [ "${CI:-}" = true ]; then echo "fanout: $1 not found ($2); CI=true" >&2; exit 1; fi
  echo "fanout: $1 not found ($2): NOT MEASURED" >&2
}
for t in $TOOLS; do
  case $t in agent | agent-first | agent-all | agent-b | agent-cm | agent-text | pssh | pssh3 | pssh-cm | pssh-cm-warm | ansible | ansible-facts) ;;
  *) echo "fanout: unknown tool $t in TOOLS" >&2; exit 2 ;;
  esac
done
for c in "$SSHD" ssh ssh-keygen /usr/bin/time python3; do
  command -v "$c" >/dev/null || { missing "$c" "install openssh-server, openssh-client, time, python3"; exit 0; }
done
if ! command -v ansible-playbook >/dev/null; then
  missing ansible-playbook "install ansible"
  TOOLS=$(echo " $TOOLS " | sed 's/ ansible-facts / /; s/ ansible / /')
fi
if ! command -v parallel-ssh >/dev/null; then
  missing parallel-ssh "install pssh"
  TOOLS=$(echo " $TOOLS " | sed 's/ pssh3 / /; s/ pssh-cm-warm / /; s/ pssh-cm / /; s/ pssh / /')
fi

work=$(mktemp -d /tmp/fanout-bench.XXXXXX)
home=$work/home
cfg=$home/.ssh/config # OpenSSH takes ~ from passwd, not $HOME: OpenSSH tools get -F
sshd_pids=()
cleanup() {
  set +e
  # Ansible's ControlPersist masters, then the sshd instances (each leads
  # its own process group, so its connections go with it).
  for s in "$home"/.ansible/cp/*; do
    [ -S "$s" ] && ssh -F "$cfg" -o ControlPath="$s" -O exit h001 2>/dev/null
  done
  for p in "${sshd_pids[@]}"; do kill -- "-$p" 2>/dev/null; done
  for p in "${sshd_pids[@]}"; do wait "$p" 2>/dev/null; done
  if [ "${KEEP:-0}" = 1 ]; then echo "fanout: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

go build -o "$work/check" ./bench/fanout/check
check() { "$work/check" "$@"; }
kernel=$(uname -r) # every "host" is this machine

# --- keys, sshd instances, operator HOME ---------------------------------
mkdir -p "$work/sshd" "$home/.ssh" "$work/state" "$work/rtmp" "$work/cm"
hoststate=$work/hoststate # agent's state directory on the "hosts" (SetEnv below)
chmod 700 "$home/.ssh"
ssh-keygen -q -t ed25519 -N '' -C fanout-host -f "$work/sshd/host_ed25519"
ssh-keygen -q -t ed25519 -N '' -C fanout-operator -f "$home/.ssh/id_ed25519"
cp "$home/.ssh/id_ed25519.pub" "$work/sshd/authorized_keys"

# sshd's privilege separation directory, normally made by its service
# unit: a fresh machine (CI's) has sshd installed and never started.
if [ "$(id -u)" = 0 ] && [ ! -d /run/sshd ]; then
  mkdir -p /run/sshd && chmod 755 /run/sshd
fi

free_port() { "${in_netns[@]}" python3 -c 'import socket, sys; s=socket.socket(); s.bind((sys.argv[1],0)); print(s.getsockname()[1])' "$HOSTS_ADDR"; }
ports=()
for i in $(seq 1 "$NSSHD"); do
  port=$(free_port)
  # Identical for every tool: no throttling of 50 concurrent connections
  # (MaxStartups) or of Ansible's multiplexed sessions (MaxSessions);
  # AcceptEnv lets parallel-ssh's PSSH_HOST through for the file step.
  cat > "$work/sshd/sshd_config.$i" <<EOF
ListenAddress $HOSTS_ADDR
Port $port
HostKey $work/sshd/host_ed25519
PidFile $work/sshd/sshd.$i.pid
AuthorizedKeysFile $work/sshd/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
LogLevel ERROR
Subsystem sftp internal-sftp
SetEnv SHLVL=1 XDG_STATE_HOME=$hoststate
AcceptEnv PSSH_*
MaxStartups 500
MaxSessions 500
EOF
  # Under a subreaper (subreaper.py): sessions sshd does not wait for are
  # reaped there, so that their CPU is counted (sshd_cpu below).
  setsid "${in_netns[@]}" "${pin_hosts[@]}" python3 "$here/subreaper.py" "$SSHD" -D -e -f "$work/sshd/sshd_config.$i" 2>>"$work/sshd/sshd.$i.log" &
  sshd_pids+=($!)
  ports+=("$port")
done

# ~/.ssh/config: hNNN → one of the sshd instances, round robin; host-key
# checking on (known_hosts holds the generated host key for each port).
write_config() { # write_config N FILE
  local n=$1 f=$2 i
  : > "$f"
  for i in $(seq 1 "$n"); do
    printf 'Host h%03d\n  HostName %s\n  Port %s\n' "$i" "$HOSTS_ADDR" "${ports[$(((i - 1) % NSSHD))]}" >> "$f"
  done
  cat >> "$f" <<EOF
Host *
  User $(id -un)
  IdentityFile $home/.ssh/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $home/.ssh/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  PasswordAuthentication no
  KbdInteractiveAuthentication no
EOF
}
write_config $((HOSTS > 500 ? HOSTS : 500)) "$cfg"
: > "$home/.ssh/known_hosts"
for p in "${ports[@]}"; do
  echo "[$HOSTS_ADDR]:$p $(cut -d' ' -f1,2 "$work/sshd/host_ed25519.pub")" >> "$home/.ssh/known_hosts"
done
chmod 600 "$cfg" "$home/.ssh/known_hosts"
# agent-cm's config: the masters' ControlPath (pssh-cm-warm's) ahead of the rest.
{ printf 'Host *\n  ControlMaster no\n  ControlPath %s/cm/%%n\n\n' "$work"; cat "$cfg"; } > "$work/cm.config"
chmod 600 "$work/cm.config"
export HOME=$home SSH_AUTH_SOCK= XDG_STATE_HOME=$work/state XDG_CONFIG_HOME=$home/.config

for i in $(seq 1 "$NSSHD"); do # wait until each instance logs us in
  h=$(printf 'h%03d' "$i")
  for try in $(seq 1 100); do
    ssh -F "$cfg" -o BatchMode=yes "$h" true 2>/dev/null && break
    # an instance that exited will not come up: say why at once
    if [ "$try" = 100 ] || ! kill -0 "${sshd_pids[$((i - 1))]}" 2>/dev/null; then
      echo "fanout: sshd $i not ready:" >&2; cat "$work/sshd/sshd.$i.log" >&2; exit 1
    fi
    sleep 0.1
  done
done
echo "fanout: $NSSHD sshd on ports ${ports[*]}; $((HOSTS > 500 ? HOSTS : 500)) aliases in ~/.ssh/config; known_hosts checked"

# The inventory of the timed runs: HOSTS bare names (as gen.sh writes them),
# and the same names one a line for parallel-ssh and the checks.
inv() { # inv N FILE
  { echo "[fanout]"; for i in $(seq 1 "$1"); do printf 'h%03d\n' "$i"; done; } > "$2"
}
inventory=$work/inventory.ini
inv "$HOSTS" "$inventory"
hosts100=$work/hosts.txt # HOSTS names, whatever HOSTS is
grep -E '^h[0-9]+$' "$inventory" > "$hosts100"
grep -E '^h[0-9]+$' "$here/inv500.ini" > "$work/hosts500.txt"

# FANOUT_EXEC=COMMAND runs COMMAND inside this set-up (HOME, sshd, aliases;
# $FANOUT_CFG is the ssh_config, $FANOUT_WORK a scratch directory) instead
# of the benchmark: for debugging and smoke tests.
if [ -n "${FANOUT_EXEC:-}" ]; then
  FANOUT_CFG=$cfg FANOUT_WORK=$work bash -c "$FANOUT_EXEC"
  exit
fi

# --- the tools ---------------------------------------------------------------
agent_bin=$AGENT
[[ $agent_bin = /* ]] || agent_bin=$repo/$agent_bin
agent_b_bin=${AGENT_B:-}
[ -z "$agent_b_bin" ] || [[ $agent_b_bin = /* ]] || agent_b_bin=$repo/$agent_b_bin
if [[ " $TOOLS " = *" agent-b "* ]] && [ ! -x "$agent_b_bin" ]; then
  echo "fanout: TOOLS has agent-b but AGENT_B ($agent_b_bin) is not an executable" >&2; exit 2
fi
have_agent=0
if [ -x "$agent_bin" ] && "$agent_bin" run --help 2>&1 | grep -q -- '--inventory'; then
  have_agent=1
fi

# run_tool TOOL ROOT OUT: one run of TOOL writing its files under ROOT and its
# outputs under OUT.
run_tool() {
  local tool=$1 root=$2 out=$3
  case $tool in
  agent | agent-first | agent-all | agent-b)
    local bin=$agent_bin approve=medium
    [ "$tool" = agent-b ] && bin=$agent_b_bin
    [ "$tool" = agent-all ] && approve=all
    # shellcheck disable=SC2086 # AGENT_FLAGS: words
    "$bin" run "$here/plan.yaml" -i "$inventory" --forks $FORKS --approve $approve $AGENT_FLAGS \
      --json --var root="$root" > "$out/stdout" 2> "$out/stderr" ;;
  agent-cm) # the default mode through the masters prepare started (pssh-cm-warm's)
    # shellcheck disable=SC2086
    "$agent_bin" run "$here/plan.yaml" -i "$inventory" -F "$work/cm.config" --forks $FORKS --approve medium $AGENT_FLAGS \
      --json --var root="$root" > "$out/stdout" 2> "$out/stderr" ;;
  agent-text) # the terminal view (not a terminal: one line per host and a table), logs in --out
    # shellcheck disable=SC2086
    "$agent_bin" run "$here/plan.yaml" -i "$inventory" --forks $FORKS --approve medium $AGENT_FLAGS \
      --out "$out/logs" --var root="$root" > "$out/stdout" 2> "$out/stderr" ;;
  pssh) # the three commands joined: one connection per host
    parallel-ssh -h "$hosts100" -p $FORKS -x "-F $cfg" -o "$out/o" -e "$out/e" \
      "uname -r; df -h /; mkdir -p $root/\$PSSH_HOST && echo \$PSSH_HOST > $root/\$PSSH_HOST/f && cat $root/\$PSSH_HOST/f" \
      > "$out/stdout" 2> "$out/stderr" ;;
  pssh3) # three invocations: one command (and connection) per host each
    parallel-ssh -h "$hosts100" -p $FORKS -x "-F $cfg" -o "$out/o1" -e "$out/e1" "uname -r" > "$out/stdout" 2> "$out/stderr" &&
      parallel-ssh -h "$hosts100" -p $FORKS -x "-F $cfg" -o "$out/o2" -e "$out/e2" "df -h /" >> "$out/stdout" 2>> "$out/stderr" &&
      parallel-ssh -h "$hosts100" -p $FORKS -x "-F $cfg" -o "$out/o3" -e "$out/e3" \
        "mkdir -p $root/\$PSSH_HOST && echo \$PSSH_HOST > $root/\$PSSH_HOST/f && cat $root/\$PSSH_HOST/f" >> "$out/stdout" 2>> "$out/stderr" ;;
  pssh-cm | pssh-cm-warm) # three invocations through a ControlMaster per host:
    # pssh-cm's first makes it (auto, persisting), pssh-cm-warm's prepare did
    local x="-F $cfg -o ControlMaster=no -o ControlPath=$work/cm/%n"
    [ "$tool" = pssh-cm ] && x="-F $cfg -o ControlMaster=auto -o ControlPath=$work/cm/%n -o ControlPersist=600 -o SendEnv=PSSH_*"
    parallel-ssh -h "$hosts100" -p $FORKS -x "$x" -o "$out/o1" -e "$out/e1" "uname -r" > "$out/stdout" 2> "$out/stderr" &&
      parallel-ssh -h "$hosts100" -p $FORKS -x "$x" -o "$out/o2" -e "$out/e2" "df -h /" >> "$out/stdout" 2>> "$out/stderr" &&
      parallel-ssh -h "$hosts100" -p $FORKS -x "$x" -o "$out/o3" -e "$out/e3" \
        "mkdir -p $root/\$PSSH_HOST && echo \$PSSH_HOST > $root/\$PSSH_HOST/f && cat $root/\$PSSH_HOST/f" >> "$out/stdout" 2>> "$out/stderr" ;;
  ansible | ansible-facts)
    local pb=$here/playbook-nofacts.yml
    [ "$tool" = ansible-facts ] && pb=$here/playbook-facts.yml
    (cd "$work" && ANSIBLE_PIPELINING=1 ANSIBLE_SSH_COMMON_ARGS="-F $cfg" ANSIBLE_REMOTE_TMP="$work/rtmp" \
      ansible-playbook -i "$inventory" -f $FORKS -e root="$root" "$pb" > "$out/stdout" 2> "$out/stderr") ;;
  esac
}

# verify TOOL ROOT OUT: did that run do the work on every host?
verify() {
  local tool=$1 root=$2 out=$3
  check files -hosts "$hosts100" -root "$root" >/dev/null || return 1
  case $tool in
  agent | agent-first | agent-all | agent-b | agent-cm) check agent -hosts "$hosts100" -kernel "$kernel" "$out/stdout" >/dev/null ;;
  agent-text)
    check agent-log -hosts "$hosts100" -kernel "$kernel" "$out/logs" >/dev/null &&
      grep -q "^$HOSTS hosts: $HOSTS ok, 0 failed, 0 not run" "$out/stdout" ;;
  pssh) check pssh -hosts "$hosts100" -kernel "$kernel" "$out/o" >/dev/null ;;
  pssh3 | pssh-cm | pssh-cm-warm) check pssh3 -hosts "$hosts100" -kernel "$kernel" "$out/o1" "$out/o2" "$out/o3" >/dev/null ;;
  ansible) check ansible -hosts "$hosts100" -ok 3 "$out/stdout" >/dev/null ;;
  ansible-facts) check ansible -hosts "$hosts100" -ok 4 "$out/stdout" >/dev/null ;;
  esac
}

# stop_masters: Ansible's ControlPersist masters outlive the playbook; every
# run starts cold, as agent's and pssh's do.
stop_masters() {
  local s
  for s in "$home"/.ansible/cp/*; do
    [ -S "$s" ] && ssh -F "$cfg" -o ControlPath="$s" -O exit h001 2>/dev/null || true
  done
}

# prepare TOOL / finish TOOL: untimed, around a run. agent-first gets a
# fresh fleet (no agent state on the hosts); pssh-cm-warm and agent-cm get
# a ControlMaster per host; pssh-cm's (made in the run) and theirs are
# stopped after the run.
prepare() {
  case $1 in
  agent-first) rm -rf "$hoststate" ;;
  pssh-cm-warm | agent-cm)
    xargs -P "$FORKS" -I{} ssh -F "$cfg" -o BatchMode=yes -o SendEnv="PSSH_*" -o ControlMaster=yes -o ControlPath="$work/cm/%n" \
      -o ControlPersist=600 -Nf {} < "$hosts100" ;;
  esac
}
finish() {
  case $1 in pssh-cm | pssh-cm-warm | agent-cm) ;; *) return 0 ;; esac
  xargs -P "$FORKS" -I{} ssh -F "$cfg" -o ControlPath="$work/cm/%n" -O exit {} < "$hosts100" 2>/dev/null || true
}

now() { date +%s.%N; }
# sshd_cpu: seconds of CPU the sshd instances' finished children used (their
# connections and the commands those ran: the work a tool causes on the
# hosts), from cutime+cstime of each sshd, which reaps its connections, and
# of the subreaper above it, which reaps the sessions a connection process
# left running when it exited. sshd does not wait for a session whose
# client closed the connection: agent's worker shell, with every command it
# ran, escaped sshd's cutime before (about 13 ms a host, 2026-11-27).
# Plus the CPU so far of every live process under sshd, with what it
# reaped: a ControlMaster's connection made before the timer
# (pssh-cm-warm, agent-cm) is counted by its use during the run alone;
# its key exchange and login, when it ends (finish) and sshd reaps it,
# were counted in the run's figure before (~20-30 ms a host). pssh-cm's
# masters are made in the run and stopped (finish) before the figure is
# read: their whole connection is in it.
tck=$(getconf CLK_TCK)
sshd_cpu() {
  python3 - "$tck" "${sshd_pids[@]}" <<'PY'
import sys
def stat(p):
    try:
        with open(f"/proc/{p}/stat") as f:
            v = f.read().rsplit(")", 1)[1].split()
        return int(v[11]) + int(v[12]), int(v[13]) + int(v[14])  # utime+stime, cutime+cstime
    except (OSError, IndexError, ValueError):
        return 0, 0
def children(p):
    try:
        with open(f"/proc/{p}/task/{p}/children") as f:
            return f.read().split()
    except OSError:
        return []
def live(p):  # own and reaped CPU of p and every live process below it
    own, reaped = stat(p)
    return own + reaped + sum(live(c) for c in children(p))
def listener(p):
    try:
        with open(f"/proc/{p}/cmdline", "rb") as f:
            return b"\0-D\0" in f.read()
    except OSError:
        return False
total = 0
for p in sys.argv[2:]:  # the subreaper: what it reaped
    total += stat(p)[1]
    for c in children(p):
        if listener(c):  # sshd: what it reaped, and its live connections
            total += stat(c)[1] + sum(live(g) for g in children(c))
        else:  # a session sshd left, not yet reaped
            total += live(c)
print(f"{total / int(sys.argv[1]):.2f}")
PY
}
# cpu_idle: idle and total jiffies of the machine (all cores, every job on it).
cpu_idle() { awk '/^cpu / { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
# fds_sampler FILE: the open descriptors of the running agent process(es),
# every 0.2 s, one count a line (agent must not run out of them). It runs
# in the background without errexit: an agent that exits between pgrep and
# ls made ls fail, pipefail and errexit then ended the sampler, and the kill
# below failed with its message discarded, so that set -e ended the whole
# benchmark with exit 1 and no message (seen once in session 4).
fds_sampler() {
  set +e
  local p
  while :; do
    for p in $(pgrep -f "^($agent_bin|${agent_b_bin:-$agent_bin}) run" 2>/dev/null); do
      ls "/proc/$p/fd" 2>/dev/null | wc -l
    done >> "$1"
    sleep 0.2
  done
}
results=$work/results # tool run wall_s cpu_s server_cpu_s rss_mib agent_fds load1 idle_pct
: > "$results"
tools=()
for t in $TOOLS; do
  if [[ $t = agent* ]] && [ $have_agent = 0 ]; then
    echo "fanout: $agent_bin has no 'agent run -i' yet: agent NOT MEASURED" >&2
    continue
  fi
  tools+=("$t")
done

# One untimed pass first: Ansible's json callback shows every host's three
# outputs (the timed runs use the default callback and check PLAY RECAP).
if [[ " ${tools[*]} " = *" ansible"* ]]; then
  root=$work/files/json
mkdir -p "$work/out/json"
(cd "$work" && ANSIBLE_PIPELINING=1 ANSIBLE_SSH_COMMON_ARGS="-F $cfg" ANSIBLE_REMOTE_TMP="$work/rtmp" \
  ANSIBLE_STDOUT_CALLBACK=json ansible-playbook -i "$inventory" -f $FORKS -e root="$root" \
  "$here/playbook-nofacts.yml" > "$work/out/json/stdout" 2> "$work/out/json/stderr") ||
  { echo "fanout: ansible json pass failed:" >&2; tail -20 "$work/out/json/stderr" >&2; exit 1; }
check ansible-json -hosts "$hosts100" -kernel "$kernel" "$work/out/json/stdout"
stop_masters
fi

# Warm-up: one untimed, checked run of each tool but Ansible (whose json
# pass above is its warm-up), so that no timed run pays for cold caches
# (binaries, ~/.ssh files, the sshd instances' first connections).
# WARMUP=0 leaves it out.
if [ "${WARMUP:-1}" = 1 ]; then
  for t in "${tools[@]}"; do
    [[ $t = ansible* ]] && continue
    root=$work/files/warm.$t out=$work/out/warm.$t
    mkdir -p "$root" "$out"
    prepare "$t"
    if ! bash -c "$(declare -f run_tool); $(declare -p here hosts100 inventory cfg work FORKS agent_bin agent_b_bin AGENT_FLAGS); run_tool $t $root $out" ||
      ! verify "$t" "$root" "$out"; then
      echo "fanout: $t warm-up run failed or did not do the work on every host:" >&2
      tail -20 "$out/stderr" >&2
      exit 1
    fi
    finish "$t"
    rm -rf "$root"
  done
fi

# Timed runs, interleaved so that load from other jobs hits every tool alike.
for r in $(seq 1 "$RUNS"); do
  for t in "${tools[@]}"; do
    [ "$r" -gt 1 ] && [[ " ${ONCE:-} " = *" $t "* ]] && continue # ONCE: tools timed in the first round only
    root=$work/files/$t.$r out=$work/out/$t.$r
    mkdir -p "$root" "$out"
    prepare "$t"
    s0=$(sshd_cpu)
    load=$(cut -d' ' -f1 /proc/loadavg)
    read -r idle0 all0 < <(cpu_idle)
    fds_sampler "$out/fds" & sampler=$!
    t0=$(now)
    rc=0
    "${pin_tool[@]}" /usr/bin/time -f '%U %S %M' -o "$out/time" bash -c "$(declare -f run_tool); $(declare -p here hosts100 inventory cfg work FORKS agent_bin agent_b_bin AGENT_FLAGS); run_tool $t $root $out" || rc=$?
    t1=$(now)
    read -r idle1 all1 < <(cpu_idle)
    kill "$sampler" 2>/dev/null || true
    wait "$sampler" 2>/dev/null || true
    stop_masters
    finish "$t"
    if [ $rc != 0 ] || ! verify "$t" "$root" "$out"; then
      echo "fanout: $t run $r failed (exit $rc) or did not do the work on every host:" >&2
      verify "$t" "$root" "$out" >&2 || true
      tail -20 "$out/stderr" >&2
      exit 1
    fi
    sleep 0.5 # let sshd reap the last connections
    srv=$(awk -v a="$s0" -v b="$(sshd_cpu)" 'BEGIN { printf "%.2f", b - a }')
    cpu=$(tail -1 "$out/time" | awk '{ print $1 + $2 }')
    rss=$(tail -1 "$out/time" | awk '{ printf "%.1f", $3 / 1024 }') # MiB, the largest process (the tool's own for agent)
    fds=$(sort -n "$out/fds" 2>/dev/null | tail -1)
    idle=$(awk -v a="$idle0" -v b="$idle1" -v c="$all0" -v d="$all1" 'BEGIN { x = (d > c) ? 100 * (b - a) / (d - c) : 0; printf "%.0f", x }')
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    echo "$t $r $wall $cpu $srv $rss ${fds:-0} $load $idle" >> "$results"
    [ -n "${RESULTS:-}" ] && echo "$(date -u +%FT%TZ) hosts=$HOSTS forks=$FORKS split=$SPLIT tool=$t run=$r wall=$wall cpu=$cpu sshd_cpu=$srv rss_mib=$rss agent_fds=${fds:-0} load1=$load idle_pct=$idle" >> "$RESULTS"
    printf '  run %d %-14s %7.2fs wall %7.2fs cpu  %7.2fs sshd cpu  %6.1f MiB  fds %4s  load %5s  idle %3s%%  (%d hosts checked)\n' \
      "$r" "$t" "$wall" "$cpu" "$srv" "$rss" "${fds:-0}" "$load" "$idle" "$HOSTS"
    rm -rf "$root"
  done
  # Each agent run's results, host by host, are pssh's of the same round.
  if [ -f "$work/out/pssh.$r/o/$(head -1 "$hosts100")" ]; then
    for a in agent agent-first agent-all agent-b agent-cm; do
      [ -f "$work/out/$a.$r/stdout" ] || continue
      check same -hosts "$hosts100" "$work/out/$a.$r/stdout" "$work/out/pssh.$r/o" >/dev/null ||
        { echo "fanout: $a run $r: results differ from parallel-ssh's" >&2; exit 1; }
      echo "  run $r $a: every host's results = parallel-ssh's"
    done
  fi
done

# --- summary -----------------------------------------------------------------
stat() { # stat TOOL COLUMN: "min median" of that column
  awk -v t="$1" -v c="$2" '$1 == t { print $c }' "$results" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) exit; m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f %.3f", v[1], m }'
}
echo
echo "== fan-out: 3 steps × $HOSTS hosts, forks $FORKS, $NSSHD $([ -n "$HOSTS_NETNS" ] && echo "sshd at $HOSTS_ADDR (namespace $HOSTS_NETNS)" || echo "loopback sshd"), $RUNS runs each$([ "$SPLIT" = 1 ] && echo ", hosts on CPU 1, tool on CPU 0")"
echo "   (min / median wall; median CPU of the tool and its children, and of sshd and what it ran)"
declare -A med medcpu medsrv
for t in "${tools[@]}"; do
  read -r mn md <<< "$(stat "$t" 3)"
  read -r _ cmd <<< "$(stat "$t" 4)"
  read -r _ smd <<< "$(stat "$t" 5)"
  read -r _ rmd <<< "$(stat "$t" 6)"
  fmx=$(awk -v t="$t" '$1 == t { print $7 }' "$results" | sort -n | tail -1)
  lds=$(awk -v t="$t" '$1 == t { print $8 }' "$results" | sort -g | awk '{ v[NR] = $1 } END { printf "%s–%s", v[1], v[NR] }')
  med[$t]=$md
  medcpu[$t]=$cmd medsrv[$t]=$smd
  printf '%-14s min %7.3fs  median %7.3fs  cpu %7.3fs (%5.1f ms/host)  sshd cpu %7.3fs (%5.1f ms/host)  rss %6.1f MiB  fds max %4s  load %s\n' \
    "$t" "$mn" "$md" "$cmd" "$(awk -v c="$cmd" -v n="$HOSTS" 'BEGIN { print 1000 * c / n }')" \
    "$smd" "$(awk -v c="$smd" -v n="$HOSTS" 'BEGIN { print 1000 * c / n }')" "$rmd" "$fmx" "$lds"
done
if [ -n "${med[agent]:-}${med[agent-first]:-}${med[agent-all]:-}${med[agent-cm]:-}" ]; then
  for a in agent agent-first agent-all agent-b agent-cm; do
    [ -n "${med[$a]:-}" ] || continue
    for t in "${tools[@]}"; do
      [[ $t = agent* ]] && continue
      awk -v p="${med[$t]}" -v a="${med[$a]}" -v t="$t" -v n="$a" \
        'BEGIN { printf "%s vs %-14s %6.2f× faster (median %s / %s): %s/%s = %.2f×\n", n, t, p / a, p, a, n, t, a / p }'
    done
  done
  if [ -n "${med[pssh]:-}" ]; then
    for a in agent agent-first agent-all agent-cm; do
      [ -n "${med[$a]:-}" ] || continue
      awk -v a="${medcpu[$a]}" -v p="${medcpu[pssh]}" -v x="${medsrv[$a]}" -v q="${medsrv[pssh]}" -v n="$a" \
        'BEGIN { printf "%s/pssh CPU: controller %.2f×, hosts %.2f×\n", n, (p > 0 ? a / p : 0), (q > 0 ? x / q : 0) }'
    done
  fi
  [ -n "${med[agent-b]:-}" ] && [ -n "${med[agent]:-}" ] && awk -v a="${med[agent]}" -v b="${med[agent-b]}" \
    'BEGIN { printf "agent-b/agent = %.2f× (median %s / %s)\n", b / a, b, a }'
  echo "targets (issue 31, agent = the default mode): warm agent/pssh ≤ 0.5, agent/pssh-cm ≤ 0.35 (pssh-cm: the issue's peer, its masters made in"
  echo "  the run; agent-cm/pssh-cm-warm: both through masters made before the timer), agent-first/pssh ≤ 1.0;"
  echo "  hosts' CPU ≤ 1.5× pssh's, controller CPU ≤ 0.1× pssh's"
fi

# --- memory: 500 hosts ---------------------------------------------------------
if [ "$MEM" = 1 ] && [ $have_agent = 1 ]; then
  root=$work/files/mem out=$work/out/mem
  mkdir -p "$root" "$out"
  t0=$(now)
  # shellcheck disable=SC2086
  /usr/bin/time -v -o "$out/time" "$agent_bin" run "$here/plan.yaml" -i "$here/inv500.ini" --forks $FORKS \
    --approve medium $AGENT_FLAGS --json --var root="$root" > "$out/stdout" 2> "$out/stderr" ||
    { echo "fanout: 500-host run failed" >&2; tail -20 "$out/stderr" >&2; exit 1; }
  t1=$(now)
  check files -hosts "$work/hosts500.txt" -root "$root" >/dev/null
  check agent -hosts "$work/hosts500.txt" -kernel "$kernel" "$out/stdout" >/dev/null
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out/time")
  echo
  echo "== memory: agent run (default mode, --approve medium) over 500 hosts, forks $FORKS (all 500 checked)"
  awk -v k="$rss" -v a="$t0" -v b="$t1" \
    'BEGIN { printf "peak RSS %d KiB = %.1f MiB in %.2fs  (target < 256 MiB)\n", k, k / 1024, b - a }'
fi
