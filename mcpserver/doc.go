// Package mcpserver offers agent's remote tools to any Model Context
// Protocol client: every registered step tool with a host parameter, and
// list_hosts, run_plan and undo. It is a front end on package engine, as
// cmd/agent is: steps run through a host's executor (classification,
// approval, audit log, undo journal), run_plan through an engine batch;
// approvals above --approve are asked of the client's user by MCP
// elicitation. Connections are kept per host across calls.
package mcpserver
