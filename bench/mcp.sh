#!/usr/bin/env bash
# make bench: the per-call overhead of `agent mcp` on a warm connection
# against `agent exec` and `ssh` with ControlMaster, on the same real sshd in
# the same run (medians; load average printed: the machine is shared).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${TESTHOST_ALIAS:-}" ]; then
  go build -o bin/mcpbench ./bench/mcpbench
  go build -o bin/transportbench ./bench/transportbench
  exec go run ./testenv/cmd/testhost -sshd -- bash bench/mcp.sh
fi
echo "== agent mcp: per-call overhead (${MCP_CALLS:-200} calls of true)"
bin/mcpbench -agent bin/agent -host "$TESTHOST_ALIAS" -n "${MCP_CALLS:-200}"
s=$(bin/transportbench -host "$TESTHOST_ALIAS" -mode steps -n "${MCP_CALLS:-200}" | sed -n 's/.*seconds=\([0-9.]*\).*/\1/p')
echo "for reference, agent's transport alone (no MCP, no executor): $(awk -v s="$s" -v n="${MCP_CALLS:-200}" 'BEGIN { printf "%.2fms", s * 1000 / n }') mean per step"
