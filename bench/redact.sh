#!/usr/bin/env bash
# bench/redact.sh: what redaction costs a real `agent run` of one step printing
# 1 MiB (base64 of random bytes), with 48 secret environment variables in
# agent's environment, locally and over OpenSSH sshd (testenv's testhost).
# Each run is sampled by perf (cpu-clock at 10 kHz, call graphs); redaction is
# the samples with a frame of package redact on their stack, less those under
# the set's compile (Set.matcher), the gate words' (compileGates) and the
# package's start-up (its regular expressions, compiled at init). Prints, per
# run, redaction CPU ms, all CPU ms sampled, the step's duration_ms and the
# load, and redaction's share of the step (redaction CPU ms / duration_ms: perf
# slows both alike); then the medians. ROUNDS rounds, interleaved with
# BEFORE's when set. The binaries need their symbols: make build's bin/agent
# has none (-s -w), so without AGENT this builds agent from the tree as it is
# (the launchers make build embedded included).
#
#   bash bench/redact.sh                          # this tree, ROUNDS=5
#   BEFORE=/tmp/agent-old bash bench/redact.sh    # A/B
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${TESTHOST_ALIAS:-}" ]; then
  exec go run ./testenv/cmd/testhost -sshd -- bash bench/redact.sh
fi
command -v perf >/dev/null || { echo "bench/redact.sh: skipped: no perf" >&2; exit 0; }
ROUNDS=${ROUNDS:-5}
work=$(mktemp -d /tmp/agent-redact.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [ -z "${AGENT:-}" ]; then
  go build -trimpath -o "$work/agent" ./cmd/agent
  AGENT=$work/agent
fi
[[ $AGENT = /* ]] || AGENT=$PWD/$AGENT
export XDG_STATE_HOME=$work/state XDG_CONFIG_HOME=$work/config CI=true
for i in $(seq 0 47); do export "BENCH_TOKEN_$i=$(printf 'sk-Zq7Kx9Wm2Rt5Yp8Lb3-%03d' "$i")"; done
cat > "$work/plan.yaml" <<'EOF'
name: print 1 MiB
steps:
  - tool: execute_command
    parameters: {command: "head -c 786432 /dev/urandom | base64"}
EOF

# samples DATA: "REDACT ALL OURS" sample counts of a perf.data (OURS: samples
# with a frame of agent's packages; none means a binary without symbols).
samples() {
  perf script -i "$1" -F comm,tid,ip,sym 2>/dev/null | awk '
    function flush() { if (n) { all++; if (red && !skip) r++; if (our) o++ }; n = 0; red = 0; skip = 0; our = 0 }
    NF == 0 { flush(); next }
    { n = 1
      if ($0 ~ /autoshell\/agent\//) our = 1
      if ($0 ~ /agent\/redact\./) red = 1
      if ($0 ~ /redact\.\(\*Set\)\.matcher|redact\.compileGates|redact\.init/) skip = 1 }
    END { flush(); print r + 0, all + 0, o + 0 }'
}

# one NAME BINARY [FLAG…]: one sampled run; appends "NAME redact_ms all_ms duration_ms" to $work/runs.
one() {
  local name=$1 bin=$2; shift 2
  perf record -q -g -e cpu-clock -F 10000 -o "$work/perf.data" -- \
    "$bin" run "$work/plan.yaml" --json --approve all "$@" > "$work/out" 2> "$work/err" ||
    { echo "bench: $name failed:" >&2; tail -5 "$work/err" >&2; exit 1; }
  tail -1 "$work/out" | grep -q '"status":"success"' || { echo "bench: $name: $(tail -1 "$work/out")" >&2; exit 1; }
  local s dur
  s=$(samples "$work/perf.data")
  [ "${s##* }" -gt 0 ] || { echo "bench: $bin has no symbols perf can read (a -s -w build such as make build's bin/agent?)" >&2; exit 1; }
  s=${s% *}
  dur=$(grep -o '"duration_ms":[0-9]*' "$work/out" | tail -1 | cut -d: -f2)
  echo "$name ${s% *} ${s#* } $dur" | awk -v load="$(cut -d' ' -f1 /proc/loadavg)" \
    '{ printf "%-14s redaction %5.1f ms  sampled %6.1f ms  duration_ms %s  share %4.1f%%  load %s\n", $1, $2 / 10, $3 / 10, $4, $2 / 10 / $4 * 100, load;
       print $1, $2 / 10, $3 / 10, $4, $2 / 10 / $4 * 100 >> "'"$work/runs"'" }'
}

for r in $(seq "$ROUNDS"); do
  for v in ${BEFORE:+before} after; do
    bin=$AGENT
    [ "$v" = before ] && bin=$BEFORE
    one "local-$v" "$bin"
    one "sshd-$v" "$bin" --ssh-host "$TESTHOST_ALIAS" -F "$HOME/.ssh/config"
  done
done
echo "medians of $ROUNDS: redaction CPU ms, sampled CPU ms, step duration_ms, redaction's share of the step"
for n in $(cut -d' ' -f1 "$work/runs" | sort -u); do
  awk -v n="$n" '$1 == n' "$work/runs" | awk '
    { a[NR] = $2; b[NR] = $3; c[NR] = $4; d[NR] = $5 }
    function med(x, k,   i, j, t) { for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
      return (k % 2) ? x[(k + 1) / 2] : (x[k / 2] + x[k / 2 + 1]) / 2 }
    END { printf "%-14s %5.1f  %6.1f  %s  %4.1f%%\n", "'"$n"'", med(a, NR), med(b, NR), med(c, NR), med(d, NR) }'
done
