// Calls an MCP server with the official TypeScript SDK (npm @modelcontextprotocol/sdk), directly over
// streamable HTTP or through mcp-remote's stdio (the bridge Claude Desktop runs), and prints what the
// client got as one JSON object. Run by tests/mcp/test_confirmation_clients.py:
//
//   node mcp_client_calls.mjs SDK_DIR MCP_REMOTE_PROXY < spec.json
//
// spec: {"transport": "http" | "mcp-remote" | "stdio", "url": "...", "command": [...],
//        "elicitation": {"url": {}} (optional: the client's elicitation capability),
//        "calls": [{"name": ..., "arguments": {...}}]}
// The bearer token comes in the environment (CAMPUS_TOKEN), never on a command line: mcp-remote reads
// it from its own environment through its ${VAR} header substitution. "stdio" runs spec.command (for
// example `campus-mcp stdio`) with this process's environment. With an elicitation capability, every
// elicitation/create the server sends is kept in the answer's "elicitations" and accepted (a URL-mode
// client says it showed the page; it cannot say whether the student confirmed there).
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [sdkDir, remoteProxy] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(0, "utf8"));
const load = (path) => import(pathToFileURL(`${sdkDir}/dist/esm/${path}`).href);
const { Client } = await load("client/index.js");

let transport;
if (spec.transport === "http") {
  const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
  transport = new StreamableHTTPClientTransport(new URL(spec.url), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.CAMPUS_TOKEN}` } },
  });
} else if (spec.transport === "stdio") {
  const { StdioClientTransport } = await load("client/stdio.js");
  transport = new StdioClientTransport({
    command: spec.command[0],
    args: spec.command.slice(1),
    env: { ...process.env },
    stderr: "pipe",
  });
} else {
  const { StdioClientTransport } = await load("client/stdio.js");
  transport = new StdioClientTransport({
    command: process.execPath,
    args: [remoteProxy, spec.url, "--allow-http", "--transport", "http-only", "--header", "Authorization:${AUTH_HEADER}"],
    env: { ...process.env, AUTH_HEADER: `Bearer ${process.env.CAMPUS_TOKEN}` },
    stderr: "pipe",
  });
}

// No capabilities unless the spec gives some: like the clients students run, this one cannot show an
// elicitation form.
const capabilities = spec.elicitation ? { elicitation: spec.elicitation } : {};
const client = new Client({ name: "campus-confirmation-test", version: "1.0.0" }, { capabilities });
const elicitations = [];
if (spec.elicitation) {
  const { ElicitRequestSchema } = await load("types.js");
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicitations.push(request.params);
    return { action: "accept" };
  });
}
await client.connect(transport);
const answer = { protocolVersion: transport.protocolVersion ?? null, tools: [], results: [], elicitations };
answer.tools = (await client.listTools()).tools.map((tool) => tool.name);
for (const call of spec.calls) {
  answer.results.push(await client.callTool({ name: call.name, arguments: call.arguments }));
}
await client.close();
process.stdout.write(JSON.stringify(answer));
