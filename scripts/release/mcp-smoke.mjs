#!/usr/bin/env node
// mcp-smoke.mjs COMMAND [ARGS...]: start an MCP stdio server, answer the
// handshake, list the tools, call the schema tool, close stdin and expect
// exit 0. Every stdout line must be JSON-RPC. Exits non-zero, saying why, on any failure.
// Used by the release checks on whatever they install (npm, image, bundle).
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const [cmd, ...args] = process.argv.slice(2);
if (!cmd) {
  console.error("usage: mcp-smoke.mjs COMMAND [ARGS...]");
  process.exit(64);
}
const limitMs = Number(process.env.SMOKE_TIMEOUT_MS || 60000);
const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
const fail = (msg) => {
  console.error(`mcp-smoke: ${msg}`);
  child.kill("SIGKILL");
  process.exit(1);
};
const timer = setTimeout(() => fail(`no result within ${limitMs} ms`), limitMs);
child.on("error", (err) => fail(`cannot start ${cmd}: ${err.message}`));
// A server that stops before the session ends fails at once, not at the limit.
let closing = false;
child.on("exit", (code, signal) => {
  if (!closing) fail(`the server exited (${code ?? signal}) before the session ended`);
});

const send = (msg) => child.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
const waiting = new Map();
createInterface({ input: child.stdout }).on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    fail(`stdout line is not JSON: ${JSON.stringify(line.slice(0, 200))}`);
  }
  if (msg.jsonrpc !== "2.0") fail(`not JSON-RPC 2.0: ${line.slice(0, 200)}`);
  const w = waiting.get(msg.id);
  if (w) {
    waiting.delete(msg.id);
    w(msg);
  }
});
const call = (id, method, params) =>
  new Promise((resolve) => {
    waiting.set(id, resolve);
    send({ id, method, params });
  });

const init = await call(1, "initialize", {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "mcp-smoke", version: "0" },
});
if (!init.result?.serverInfo?.name) fail(`initialize: ${JSON.stringify(init)}`);
send({ method: "notifications/initialized", params: {} });
// The six read-only tools, by name.
const want = ["aggregate", "fetch", "query_records", "read_record_field", "schema", "search"];
const list = await call(2, "tools/list", {});
const names = (list.result?.tools ?? []).map((t) => t.name).sort();
if (names.join() !== want.join()) fail(`tools/list: got ${JSON.stringify(names)}, want ${JSON.stringify(want)}`);
const res = await call(3, "tools/call", { name: "schema", arguments: {} });
const text = res.result?.content?.[0]?.text;
if (res.result?.isError || typeof text !== "string" || text === "") fail(`tools/call schema: ${JSON.stringify(res).slice(0, 300)}`);
console.log(`mcp-smoke: ${init.result.serverInfo.name} ${init.result.serverInfo.version} answered initialize, tools/list and schema (${text.length} chars)`);
closing = true;
child.stdin.end();
child.on("exit", (code, signal) => {
  clearTimeout(timer);
  if (code !== 0) fail(`exit ${code ?? signal} after stdin closed`);
  process.exit(0);
});
