// Starts pdpp-mcp the way a host does when no grant is cached, with the
// official TypeScript SDK client, and checks what the person is shown: the
// client's connect must fail with pdpp-mcp's guidance (the file it looked
// at and the `pdpp connect` command), not with "Connection closed". Then
// runs the same command line on its own to check the exit status (78) and
// that stdout carried JSON-RPC only.
// Run: scripts/ts-client-check/run.sh (builds the binary, installs the SDK).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const bin = process.argv[2];
if (!bin) {
  console.error("usage: node startup.mjs PATH_TO_PDPP_MCP");
  process.exit(2);
}

// An empty home: no credential cached anywhere pdpp-mcp looks.
const home = mkdtempSync(join(tmpdir(), "pdpp-mcp-startup-"));
const provider = "https://pdpp.example.com";
const env = { PATH: process.env.PATH, HOME: home };
const args = ["--provider-url", provider, "--cache-root", "~/.pdpp"];
let failed = 0;
const check = (ok, label, detail) => {
  if (!ok) failed++;
  console.log(`${ok ? "ok  " : "FAIL"} ${label}${ok ? "" : `: ${detail}`}`);
};

const client = new Client({ name: "ts-client-check", version: "1.0.0" });
let shown = "";
try {
  await client.connect(new StdioClientTransport({ command: bin, args, env, stderr: "ignore" }));
  check(false, "connect fails", "it succeeded");
} catch (err) {
  shown = String(err?.message ?? err);
}
console.log(`the client reports: ${shown}`);
const file = join(home, ".pdpp", "clients", "pdpp.example.com.json");
check(!/Connection closed/.test(shown), "not a bare closed connection", shown);
check(shown.includes(`looked for ${file}`), "names the file looked at", shown);
check(shown.includes(`pdpp connect ${provider}`), "names the command to run", shown);
await client.close().catch(() => {});

// The process on its own: the answer to initialize, then exit 78.
const init = JSON.stringify({
  jsonrpc: "2.0", id: 1, method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } },
}) + "\n";
const run = spawnSync(bin, args, { env, input: init, encoding: "utf8", timeout: 20000 });
check(run.status === 78, "exits 78", `status ${run.status}, signal ${run.signal}`);
const lines = run.stdout.split("\n").filter((l) => l !== "");
check(lines.length === 1 && lines.every((l) => JSON.parse(l).jsonrpc === "2.0"), "stdout is one JSON-RPC message", run.stdout);
check(run.stderr.includes("pdpp connect"), "stderr says the same", run.stderr);

rmSync(home, { recursive: true, force: true });
console.log(failed === 0 ? "start-up refusal: all checks passed" : `start-up refusal: ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
