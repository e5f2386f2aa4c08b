// Several official TypeScript SDK clients on one `agent mcp --http
// --approve ask` (the hidden checks of issue 28, with a real client):
// node clients.mjs URL TOKEN HOST DIR MARKER
//   - a foreign Origin is refused (403), a lowercase "bearer" accepted;
//   - client A's "always" approves A's repeat of a step, not B's (B has
//     no elicitation: refused) nor C's (asked again, declines);
//   - A2 disconnects with a question open: B2's question comes within a
//     second, B2's step runs, A2's never does (DIR/never.txt: the Go
//     test checks it is absent);
//   - 20 clients disconnect mid-call (`sleep MARKERnn`): every such
//     process on this machine is gone within 10 s and the host still
//     serves.
// It prints "DONE …", or "FAIL …" lines and exits 1.
import { readdirSync, readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, token, host, dir, marker] = process.argv.slice(2);
const fail = (m) => { console.log("FAIL " + m); process.exitCode = 1; };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// connect returns a client; answer(req) is its elicitation handler (none:
// the client does not declare elicitation).
async function connect(name, answer) {
  const client = new Client({ name, version: "1.0.0" }, { capabilities: answer ? { elicitation: {} } : {} });
  if (answer) client.setRequestHandler(ElicitRequestSchema, answer);
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: "bearer " + token } } });
  await client.connect(transport);
  return { client, transport };
}
const text = (r) => (r.content || []).map((c) => c.text || "").join("");
const exec = (c, command) => c.client.callTool({ name: "execute_command", arguments: { host, command } });

// processes lists this machine's command lines holding s.
function processes(s) {
  const out = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p) || p === String(process.pid)) continue;
    try {
      const cl = readFileSync(`/proc/${p}/cmdline`, "latin1").replaceAll("\0", " ");
      if (cl.includes(s)) out.push(p + ": " + cl);
    } catch {}
  }
  return out;
}

// Origin: a foreign one is refused before anything else.
const init = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
const post = (origin) => fetch(url, { method: "POST", body: init, headers: { Authorization: "bearer " + token,
  "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...(origin ? { Origin: origin } : {}) } });
let res = await post("http://evil.example");
if (res.status !== 403) fail("Origin http://evil.example: status " + res.status);
res = await post("");
if (res.status !== 200) fail("no Origin, lowercase bearer: status " + res.status);

// A's always is A's own.
let askedA = 0;
const a = await connect("ts-a", async () => { askedA++; return { action: "accept", content: { approve: true, always: true } }; });
const always = `echo x >> ${dir}/always.txt`;
for (let i = 0; i < 2; i++) {
  const r = await exec(a, always);
  if (r.isError) fail(`A's call ${i}: ${text(r)}`);
}
if (askedA !== 1) fail(`A was asked ${askedA} times, want once (always)`);
const b = await connect("ts-b", null);
let r = await exec(b, always);
if (!r.isError) fail("B (no elicitation) ran A's always-approved step: " + text(r));
let askedC = 0;
const c = await connect("ts-c", async () => { askedC++; return { action: "decline" }; });
r = await exec(c, always);
if (!r.isError || askedC !== 1) fail(`C (asked ${askedC}): ran A's always-approved step: ${text(r)}`);
for (const x of [a, b, c]) await x.client.close();

// A2 leaves with a question open; B2 is not kept waiting.
let asked2;
const wasAsked = new Promise((res) => { asked2 = res; });
const a2 = await connect("ts-a2", () => { asked2(); return new Promise(() => {}); });
const never = exec(a2, `echo a > ${dir}/never.txt`).catch(() => null);
let timer;
const askedInTime = await Promise.race([wasAsked.then(() => true), new Promise((res) => { timer = setTimeout(() => res(false), 30000); })]);
clearTimeout(timer);
if (!askedInTime) fail("A2 was never asked");
await a2.transport.close();
await never;
let askedAt = 0;
const b2 = await connect("ts-b2", async () => { askedAt = Date.now(); return { action: "accept", content: { approve: true } }; });
const start = Date.now();
r = await exec(b2, `echo b > ${dir}/b.txt`);
if (r.isError) fail("B2's approved step: " + text(r));
if (!askedAt || askedAt - start > 1000) fail(`B2 was asked ${askedAt - start} ms after its call`);
await b2.client.close();

// 20 clients leave mid-call.
for (let i = 0; i < 20; i++) {
  const mine = `${marker}${String(i).padStart(2, "0")}`;
  const x = await connect("ts-cut" + i, null);
  const p = exec(x, `${mine}; echo done`).catch(() => null);
  const deadline = Date.now() + 20000;
  while (processes(mine).length === 0) {
    if (Date.now() > deadline) { fail(`call ${i} never started`); break; }
    await sleep(20);
  }
  await x.transport.close();
  await p;
}
const deadline = Date.now() + 10000;
while (processes(marker).length > 0 && Date.now() < deadline) await sleep(100);
const left = processes(marker);
if (left.length > 0) fail("processes left after 20 disconnects:\n" + left.join("\n"));
const z = await connect("ts-z", null);
r = await exec(z, "echo still serving");
if (r.isError || text(r) !== "still serving\n") fail("after 20 disconnects: " + text(r));
await z.client.close();
console.log(`DONE askedA=${askedA} askedC=${askedC} b2=${askedAt - start}ms`);
