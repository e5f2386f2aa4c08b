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
echo "reached through ~/.ssh/config as '$host'. No LLM is involved yet: the task loop is issue 4."

step agent ssh-config "$host"
step agent --ssh-host "$host" exec -- 'uname -sr; id -un; cat ~/test/a.sh'
step agent --ssh-host "$host" exec -- 'sh ~/test/a.sh'
step agent --ssh-host "$host" exec -- "sed -i 's/echo 1/echo 2/' ~/test/a.sh"
out=$(agent --ssh-host "$host" exec -- 'sh ~/test/a.sh')
show agent --ssh-host "$host" exec -- 'sh ~/test/a.sh'
echo "$out"
if [ "$out" != 2 ]; then
  echo "demo: FAILED — the script prints '$out', want 2" >&2
  exit 1
fi
echo
echo "✓ ~/test/a.sh on '$host' printed 1 and now prints 2, over SSH, with host-key checking."
echo "  Point agent at your own hosts with --ssh-host HOST (any Host of your ~/.ssh/config)."
