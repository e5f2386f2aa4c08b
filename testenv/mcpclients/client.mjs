// Drives `agent mcp` with the official TypeScript SDK (a real client, not
// agent's Go one): node client.mjs stdio INVENTORY - FILE, or
// node client.mjs http URL TOKEN FILE. It lists the tools, runs a safe
// command, writes FILE (a medium step the server asks about through
// elicitation: approved), sends a bad argument type, undoes, and prints
// "DONE …", or "FAIL …" lines and exits 1. The token is sent with a
// lowercase "bearer" (RFC 7235: the scheme is case-insensitive).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, target, token, file] = process.argv.slice(2);
const fail = (m) => { console.log("FAIL " + m); process.exitCode = 1; };
let asked = 0;
const client = new Client({ name: "ts-sdk-test", version: "1.0.0" }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked++;
  return { action: "accept", content: { approve: true, always: false } };
});
let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: "agent", args: ["mcp", "-i", target, "--approve", "ask"], env: process.env, stderr: "inherit" });
} else {
  transport = new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers: { Authorization: "bearer " + token } } });
}
await client.connect(transport);
const version = client.getServerVersion();
if (!version || version.name !== "agent") fail("server " + JSON.stringify(version));
const tools = await client.listTools();
const names = tools.tools.map((t) => t.name);
for (const n of ["execute_command", "read_file", "write_file", "undo", "list_hosts"]) if (!names.includes(n)) fail("no tool " + n);
let r = await client.callTool({ name: "execute_command", arguments: { host: "me", command: "echo ts-hi" } });
if (r.isError || !JSON.stringify(r.content).includes("ts-hi")) fail("echo: " + JSON.stringify(r));
// A medium step: asked through elicitation, approved, then run.
r = await client.callTool({ name: "write_file", arguments: { host: "me", file_path: file, content: "from ts\n" } });
if (r.isError || asked !== 1) fail("write_file (asked " + asked + "): " + JSON.stringify(r));
// A bad argument type is a tool error, not a crash.
r = await client.callTool({ name: "execute_command", arguments: { host: "me", command: "true", timeout: "3" } }).catch((e) => ({ isError: true, e: String(e) }));
if (!r.isError) fail("timeout \"3\" accepted");
r = await client.callTool({ name: "undo", arguments: { host: "me" } });
if (r.isError) fail("undo: " + JSON.stringify(r));
await client.close();
console.log("DONE " + mode + " asked=" + asked + " tools=" + names.length);
