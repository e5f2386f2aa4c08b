#!/usr/bin/env bash
# The demo `make demo` runs, inside testhost (HOME is an operator home whose
# ~/.ssh/config names the in-process test host "$TESTHOST_ALIAS").
set -euo pipefail
host=$TESTHOST_ALIAS
bold=$'\e[1m' off=$'\e[0m'
[ -n "${NO_COLOR:-}" ] || [ ! -t 1 ] && bold='' off=''
# show a command as it would be typed: arguments with spaces or specials quoted
show() {
  local out='' a
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./:=@%+-]+$ ]]; then out+=" $a"
    elif [[ $a == *"'"* && ! $a =~ [\"\$\`\\] ]]; then out+=" \"$a\""
    else out+=" '${a//\'/\'\\\'\'}'"; fi
  done
  printf '\n%s$%s%s\n' "$bold" "$out" "$off"
}
step() { show "$@"; "$@"; }

echo "agent demo — a real SSH host on $TESTHOST_ADDR (in-process SSH/SFTP server from testenv),"
echo "reached through ~/.ssh/config as '$host'. No LLM is involved yet (the task loop is issue 4):"
echo "the steps come from a saved plan, examples/fix-script.yaml."

step agent ssh-config "$host"
step agent --ssh-host "$host" exec -- 'cat ~/test/a.sh; sh ~/test/a.sh'
# the plan: run the script; if it prints 1, edit it to print 2; check. The edit
# is a medium-risk file change: --approve medium lets it run unattended.
step agent run examples/fix-script.yaml --ssh-host "$host" --approve medium
out=$(agent --ssh-host "$host" exec -- 'sh ~/test/a.sh')
show agent --ssh-host "$host" exec -- 'sh ~/test/a.sh'
echo "$out"
if [ "$out" != 2 ]; then
  echo "demo: FAILED — the script prints '$out', want 2" >&2
  exit 1
fi
# every file change was journaled first: undo puts the script back
step agent --ssh-host "$host" undo
back=$(agent --ssh-host "$host" exec -- 'sh ~/test/a.sh')
show agent --ssh-host "$host" exec -- 'sh ~/test/a.sh'
echo "$back"
if [ "$back" != 1 ]; then
  echo "demo: FAILED — after undo the script prints '$back', want 1" >&2
  exit 1
fi
echo
echo "✓ over SSH with host-key checking: the plan changed ~/test/a.sh to print 2, and undo restored it."
echo "  Point agent at your own hosts with --ssh-host HOST (any Host of your ~/.ssh/config)."
