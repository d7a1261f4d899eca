// Drives `pdpp-mcp --demo` with the official TypeScript SDK client and calls
// each tool with arguments that succeed and arguments that fail. The client
// validates structuredContent against each tool's output schema and throws
// when a result does not match; the anchor's error results made it throw.
// Run: scripts/ts-client-check/run.sh (builds the binary, installs the SDK).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { spawn } from "node:child_process";

const bin = process.argv[2];
const overHTTP = process.argv[3] === "--http";
if (!bin) {
  console.error("usage: node check.mjs PATH_TO_PDPP_MCP [--http]");
  process.exit(2);
}

// startHosted runs `pdpp-mcp --demo --http 127.0.0.1:0` and reads the
// endpoint and the client token it prints.
function startHosted() {
  const child = spawn(bin, ["--demo", "--http", "127.0.0.1:0", "--access-log=false"], { stdio: ["ignore", "ignore", "pipe"] });
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr.on("data", (chunk) => {
      err += chunk;
      const url = err.match(/serving hosted MCP at (\S+)/);
      const token = err.match(/client \(served\):\s+(\S+)/);
      if (url && token) resolve({ child, url: url[1], token: token[1] });
    });
    child.on("exit", (code) => reject(new Error(`pdpp-mcp exited ${code}: ${err}`)));
  });
}

const calls = [
  // successes
  ["schema", {}, false],
  ["schema", { stream: "transactions" }, false],
  ["query_records", { stream: "transactions", limit: 3 }, false],
  ["aggregate", { stream: "transactions", metric: "count", group_by: "category", limit: 3 }, false],
  ["search", { q: "marigold contingency" }, false],
  ["fetch", { id: "cin_3a769b3e43e3792e0a811ceb/mail_bodies:177aa15315e811e9_body" }, false],
  ["read_record_field", { id: "cin_3a769b3e43e3792e0a811ceb/mail_bodies:177aa15315e811e9_body", field_path: "body_text", limit_chars: 200 }, false],
  // errors found by the server before any RS call
  ["schema", { detail: "full" }, true],
  ["query_records", { stream: "transactions", filter: {} }, true],
  ["fetch", { id: "cin/orders:../../etc/passwd" }, true],
  ["read_record_field", { id: "a/b:c", stream: "x", field_path: "f" }, true],
  // errors from the RS
  ["query_records", { stream: "calendar_attendees" }, true],
  ["query_records", { stream: "transactions", filter: { status: "posted" } }, true],
  ["aggregate", { stream: "transactions", metric: "sum", field: "status" }, true],
  ["fetch", { id: "mail_labels:INBOX" }, true],
  ["read_record_field", { id: "cin_3a769b3e43e3792e0a811ceb/mail_bodies:177aa15315e811e9_body", field_path: "nope" }, true],
];

const client = new Client({ name: "ts-client-check", version: "1.0.0" });
let hosted;
if (overHTTP) {
  hosted = await startHosted();
  await client.connect(new StreamableHTTPClientTransport(new URL(hosted.url), {
    requestInit: { headers: { Authorization: `Bearer ${hosted.token}` } },
  }));
} else {
  await client.connect(new StdioClientTransport({ command: bin, args: ["--demo"], stderr: "ignore" }));
}
await client.listTools(); // the client caches output schemas from this list

let failed = 0;
for (const [name, args, wantError] of calls) {
  const label = `${name} ${JSON.stringify(args)}`;
  try {
    const res = await client.callTool({ name, arguments: args });
    if (Boolean(res.isError) !== wantError) {
      failed++;
      console.log(`FAIL ${label}: isError=${Boolean(res.isError)}, want ${wantError}`);
    } else {
      console.log(`ok   ${label}${wantError ? " (error result)" : ""}`);
    }
  } catch (err) {
    failed++;
    console.log(`FAIL ${label}: the client threw: ${err.message}`);
  }
}
await client.close();
hosted?.child.kill();
console.log(`${calls.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
