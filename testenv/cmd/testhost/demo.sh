#!/usr/bin/env bash
# The demo `make demo` runs, inside testhost: HOME is an operator home whose
# ~/.ssh/config names the in-process test host "$TESTHOST_ALIAS", and
# AGENT_BASE_URL/AGENT_MODEL point agent at testhost's scripted model.
set -euo pipefail
host=$TESTHOST_ALIAS
task='执行用户目录下的test目录下 a.sh,如果输出为1那修改脚本让它输出为2'
bold=$'\e[1m' off=$'\e[0m'
[ -n "${NO_COLOR:-}" ] || [ ! -t 1 ] && bold='' off=''
# show a command as it would be typed: arguments with spaces or specials quoted
show() {
  local out='' a
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./:=@%+-]+$ ]]; then out+=" $a"
    elif [[ $a == *"'"* && ! $a =~ [\"\$\`\\] ]]; then out+=" \"$a\""
    else out+=" \"${a//\"/\\\"}\""; fi
  done
  printf '\n%s$%s%s\n' "$bold" "$out" "$off"
}
step() { show "$@"; "$@"; }
prints() { agent --ssh-host "$host" exec -- 'sh ~/test/a.sh'; }

cat <<TXT
agent demo — a real SSH host on $TESTHOST_ADDR (the in-process SSH/SFTP server
from testenv), reached through ~/.ssh/config as '$host', with host-key checking.

The model is SCRIPTED: a local OpenAI-compatible server ($AGENT_BASE_URL,
model '$AGENT_MODEL') answers this one task with fixed replies
(testenv/cmd/testhost/demo-model.json). Everything else is real: agent plans the
task with it, asks it for steps phase by phase, evaluates the conditions, checks
every step against the safety policy and runs it on the host over SSH/SFTP.
TXT

step agent --ssh-host "$host" exec -- 'cat ~/test/a.sh; sh ~/test/a.sh'

# Running the script and editing it are medium-risk steps (a program run, a file
# write). There is no one to answer an approval prompt when make demo runs
# unattended (without a terminal the default is --approve never: only safe steps
# run), so --approve medium lets medium steps run; high-risk ones (sudo, rm -r,
# system paths, other hosts, opaque code) would still be refused.
echo
echo "--approve medium: running the script and editing it are medium-risk steps; the demo runs"
echo "unattended, so they run without asking. High-risk steps would still be refused."
step agent --ssh-host "$host" -c "$task" --approve medium

show agent --ssh-host "$host" exec -- 'sh ~/test/a.sh'
out=$(prints)
echo "$out"
if [ "$out" != 2 ]; then
  echo "demo: FAILED — the script prints '$out', want 2" >&2
  exit 1
fi

# every file change was journaled first: undo puts the script back
step agent --ssh-host "$host" undo
show agent --ssh-host "$host" exec -- 'sh ~/test/a.sh'
back=$(prints)
echo "$back"
if [ "$back" != 1 ]; then
  echo "demo: FAILED — after undo the script prints '$back', want 1" >&2
  exit 1
fi

cat <<'TXT'

✓ The task ran through the planner, the step generator, the safety checks and SSH:
  ~/test/a.sh printed 1, so agent changed it to print 2 and verified it; undo restored it.

With a real model instead of the scripted one (nothing else changes):
  export DEEPSEEK_API_KEY=sk-…                  # DeepSeek (deepseek-chat)
  export OPENAI_API_KEY=sk-…                    # or OpenAI (OPENAI_BASE_URL for a proxy)
  agent --base-url http://HOST:PORT/v1 --model NAME -c "…"   # or any OpenAI-compatible endpoint
  ollama pull qwen2.5:7b                        # or nothing at all: a local Ollama is the default
  agent config set-llm                          # saves the choice in ~/.config/agent/config.yaml
Point agent at your own hosts with --ssh-host HOST (any Host of your ~/.ssh/config).
TXT
