// Real hosts against `pdpp-mcp --demo --http`, headless, each with a
// throwaway HOME and no account of its maker: Claude Code's own CLI,
// mcp-remote (the stdio bridge desktop hosts start for a remote server) and
// Codex. Each signs in through the demo's consent page, which headless
// Chromium answers like a person, and is served. Then the demo restarts on
// the same port and each host goes on from what it stored, without a
// logout: its access token is served, its refresh token rotates, and a new
// sign-in with its stored registration is accepted (the demo once forgot
// registrations on restart and answered "Unknown client_id").
//
// Claude Code also shows the README's start-up refusal: `claude mcp list`
// prints pdpp-mcp's -32050 reason inline for a stdio entry that has no
// credential.
//
//   node hosts.mjs PDPP_MCP_BINARY CHROMIUM
//   OAUTH_E2E_HOSTS=mcp-remote node hosts.mjs …     # some of the hosts
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Demo, consent, freePort, launchBrowser, notOpenedBy, openedBy, run, systemBrowser, track } from "./lib.mjs";

const [binary, chromiumPath] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const modules = join(here, "node_modules");
const deadline = setTimeout(() => fail("no result within 300 s"), 300_000);
deadline.unref();
const demo = new Demo(binary);
const cleanups = [];
const name = "pdpp-demo-http";

function fail(msg) {
  console.error(`FAIL ${msg}`);
  cleanup();
  process.exit(1);
}

function cleanup() {
  demo.kill();
  for (const c of cleanups.splice(0).reverse()) {
    try {
      c();
    } catch {
      // best effort: the process exits next
    }
  }
}

// scratch makes a throwaway folder removed at exit.
function scratch(prefix) {
  const dir = mkdtempSync(join(tmpdir(), `oauth-e2e-${prefix}-`));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// hostEnv is this process's environment without anything that would sign a
// host in to its maker's service or move its state out of the throwaway
// HOME, plus set.
function hostEnv(set) {
  const env = { ...process.env };
  for (const k of ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CONFIG_DIR",
    "OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_HOME", "MCP_REMOTE_CONFIG_DIR",
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"]) delete env[k];
  return { ...env, ...set };
}

// readJSON and writeJSON edit a host's own stored state.
const readJSON = (p) => JSON.parse(readFileSync(p, "utf8"));
const writeJSON = (p, v) => writeFileSync(p, JSON.stringify(v));

// A tool call's answer is served when it is the schema tool's text.
function servedSchema(text, what) {
  if (!text.includes("PDPP schema: connectors=")) throw new Error(`${what}: not served: ${text.slice(0, 600)}`);
}

// ---- Claude Code -------------------------------------------------------

// claudeCode drives the `claude` CLI as a person would in a terminal: mcp
// add, mcp login (which refuses to run without a terminal, so it runs under
// script(1)'s pty), mcp list. Its OAuth state is
// $HOME/.claude/.credentials.json on Linux.
function claudeCode(opener) {
  const dir = scratch("claude");
  const home = join(dir, "home");
  const project = join(dir, "project");
  mkdirSync(home);
  mkdirSync(project);
  const bin = join(modules, "@anthropic-ai", "claude-code", "bin", "claude.exe");
  const env = hostEnv({
    HOME: home, BROWSER: opener.browser, PATH: `${opener.bin}:${process.env.PATH}`,
    DISABLE_AUTOUPDATER: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  });
  const claude = async (...args) => {
    const r = await run(bin, args, { env, cwd: project });
    if (r.code !== 0) throw new Error(`claude ${args.join(" ")}: exit ${r.code}:\n${r.out}`);
    return r.out;
  };
  // list runs `claude mcp list` (it connects to every entry) and returns
  // the line of each entry by name.
  const list = async () => {
    const lines = {};
    for (const l of (await claude("mcp", "list")).split("\n")) {
      const m = l.match(/^([\w-]+): /);
      if (m) lines[m[1]] = l;
    }
    return lines;
  };
  const connected = async (what) => {
    const l = (await list())[name];
    if (!l?.includes("✔ Connected")) throw new Error(`claude mcp list ${what}: ${l ?? "no entry"}`);
  };
  const stored = () => {
    const all = readJSON(join(home, ".claude", ".credentials.json")).mcpOAuth ?? {};
    const e = Object.values(all).find((v) => v.serverName === name);
    if (!e?.accessToken || !e?.clientId) throw new Error(`Claude Code stored no OAuth entry for ${name}: ${Object.keys(all)}`);
    return e;
  };
  // login runs `claude mcp login` under a pty and answers the consent page
  // it opens; it returns the client_id the authorization request named.
  const login = async (page, sources) => {
    const cmd = `'${bin}' mcp login ${name}`;
    const running = run("script", ["-qec", cmd, "/dev/null"], { env, cwd: project });
    const url = await openedBy(opener, running, "claude mcp login");
    await consent(page, url, sources);
    const r = await running;
    if (r.code !== 0 || !r.out.includes(`Authenticated with "${name}"`)) {
      throw new Error(`claude mcp login: exit ${r.code}:\n${r.out.slice(-2000)}`);
    }
    return url.searchParams.get("client_id");
  };

  return {
    name: "Claude Code",
    async refusal() {
      // The README's stdio entry, with a cache folder that holds no credential.
      await claude("mcp", "add", "pdpp", "--", binary, "--provider-url", "https://pdpp.example.com",
        "--cache-root", join(home, ".pdpp"));
      const l = (await list()).pdpp ?? "";
      const want = "✘ Failed to connect — -32050: pdpp-mcp cannot start: No scoped PDPP credential cached for ";
      if (!l.includes(want) || !l.includes("Run `pdpp connect ")) {
        throw new Error(`claude mcp list does not print the refusal inline:\n${l}\nwant it to contain: ${want}… Run \`pdpp connect …`);
      }
      await claude("mcp", "remove", "pdpp");
      return "stdio entry with no credential: `claude mcp list` prints the -32050 reason inline";
    },
    async signIn(base, page) {
      await claude("mcp", "add", "--transport", "http", name, `${base}/mcp`);
      const before = (await list())[name] ?? "";
      if (!before.includes("Needs authentication")) throw new Error(`before login, claude mcp list: ${before}`);
      await login(page, 1);
      await connected("after login");
      return "mcp add --transport http, mcp login (pty, consent), mcp list: Connected";
    },
    async afterRestart(base, page) {
      const first = stored();
      await connected("after the restart");
      if (stored().accessToken !== first.accessToken) throw new Error("Claude Code replaced its access token after the restart");
      // A stored access token that has expired makes Claude Code refresh.
      const path = join(home, ".claude", ".credentials.json");
      const all = readJSON(path);
      for (const v of Object.values(all.mcpOAuth)) if (v.serverName === name) v.expiresAt = Date.now() - 60_000;
      writeJSON(path, all);
      await connected("after its access token expired");
      const refreshed = stored();
      if (refreshed.accessToken === first.accessToken) throw new Error("Claude Code did not refresh its expired access token");
      if (refreshed.clientId !== first.clientId) throw new Error("Claude Code registered again to refresh");
      const asked = await login(page, 3);
      if (asked !== first.clientId) throw new Error("Claude Code registered again to sign in after the restart");
      await connected("after signing in again");
      return "stored token Connected; expired token refreshed; mcp login again with the stored registration (3 sources)";
    },
  };
}

// ---- mcp-remote --------------------------------------------------------

// mcpRemote runs mcp-remote as a desktop host does, a stdio MCP server
// started with the remote URL, and talks to it with the TypeScript SDK's
// stdio client. It keeps its OAuth state in MCP_REMOTE_CONFIG_DIR (by
// default ~/.mcp-auth), one <hash>_client_info.json and _tokens.json per
// server.
function mcpRemote(opener) {
  const dir = scratch("mcp-remote");
  const config = join(dir, "mcp-auth");
  const env = hostEnv({
    HOME: join(dir, "home"), MCP_REMOTE_CONFIG_DIR: config, BROWSER: opener.browser,
    PATH: `${opener.bin}:${process.env.PATH}`,
  });
  const proxy = join(modules, "mcp-remote", "dist", "proxy.js");
  const file = (suffix) => {
    const find = (d) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) {
          const f = find(p);
          if (f) return f;
        } else if (e.name.endsWith(suffix)) return p;
      }
    };
    const f = find(config);
    if (!f) throw new Error(`mcp-remote stored no *${suffix} under its config folder`);
    return f;
  };
  const clientId = () => readJSON(file("_client_info.json")).client_id;
  const accessToken = () => readJSON(file("_tokens.json")).access_token;
  // session starts mcp-remote, answers the consent page if it opens one
  // (sources ticked), calls schema through it and stops it. It returns the
  // URL mcp-remote opened, if any.
  const session = async (base, page, sources) => {
    const before = opener.opened;
    const transport = new StdioClientTransport({ command: process.execPath, args: [proxy, `${base}/mcp`], env, stderr: "pipe" });
    let log = "";
    transport.stderr.on("data", (b) => (log += b));
    const client = new Client({ name: "oauth-e2e", version: "1" });
    // The SDK spawns mcp-remote in start(), and when connect fails it only
    // closes mcp-remote's stdin, which mcp-remote waiting for a sign-in
    // ignores: stop it at the end of the session.
    let pid;
    const start = transport.start.bind(transport);
    transport.start = async () => {
      await start();
      pid = transport.pid;
    };
    const connecting = client.connect(transport).then(() => ({ code: "connected", out: log }), (e) => ({ code: String(e), out: log }));
    let url;
    try {
      if (sources) {
        url = await openedBy(opener, connecting, "mcp-remote");
        await consent(page, url, sources);
      }
      const c = sources ? await connecting : await notOpenedBy(opener, connecting, "mcp-remote");
      if (c.code !== "connected") throw new Error(`mcp-remote: ${c.code}:\n${log.slice(-3000)}`);
      const res = await client.callTool({ name: "schema", arguments: {} });
      servedSchema(res.isError ? JSON.stringify(res) : res.content?.[0]?.text ?? "", "mcp-remote schema");
    } finally {
      await client.close().catch(() => {});
      try {
        if (pid) process.kill(pid, "SIGTERM");
      } catch {
        // it has exited
      }
    }
    if (!sources && opener.opened !== before) throw new Error(`mcp-remote opened the browser to sign in again:\n${log.slice(-3000)}`);
    return url;
  };

  return {
    name: "mcp-remote",
    async signIn(base, page) {
      await session(base, page, 1);
      return "401 -> registration -> consent -> schema served through the stdio bridge";
    },
    async afterRestart(base, page) {
      const id = clientId();
      const first = accessToken();
      await session(base, page, 0);
      if (accessToken() !== first) throw new Error("mcp-remote replaced its access token after the restart");
      // An expired access token in ~/.mcp-auth makes mcp-remote refresh.
      const tokens = file("_tokens.json");
      writeJSON(tokens, { ...readJSON(tokens), expires_at: Date.now() - 60_000 });
      await session(base, page, 0);
      if (accessToken() === first) throw new Error("mcp-remote did not refresh its expired access token");
      // No tokens at all: it signs in again with the stored registration.
      rmSync(tokens);
      const url = await session(base, page, 2);
      if (url.searchParams.get("client_id") !== id || clientId() !== id) {
        throw new Error("mcp-remote registered again to sign in after the restart");
      }
      return "stored token served, no browser; expired token refreshed; signed in again with the stored registration";
    },
  };
}

// ---- Codex -------------------------------------------------------------

// codex drives the Codex CLI with its own CODEX_HOME: the server entry in
// config.toml (OAuth state in a file there, $CODEX_HOME/.credentials.json,
// rather than the system keyring), `codex mcp login`, and a tool call
// through `codex app-server` (JSON-RPC on stdio), which needs no model and
// no OpenAI account to call an MCP server's tool.
function codex(opener) {
  const dir = scratch("codex");
  const codexHome = join(dir, "codex");
  const work = join(dir, "work");
  mkdirSync(codexHome);
  mkdirSync(work);
  const env = hostEnv({
    HOME: join(dir, "home"), CODEX_HOME: codexHome, BROWSER: opener.browser,
    PATH: `${opener.bin}:${process.env.PATH}`,
  });
  const cli = join(modules, "@openai", "codex", "bin", "codex.js");
  const credentials = join(codexHome, ".credentials.json");
  const stored = () => {
    const e = Object.values(readJSON(credentials)).find((v) => v.server_name === name);
    if (!e?.access_token || !e?.client_id) throw new Error(`Codex stored no OAuth entry for ${name}`);
    return e;
  };
  const login = async (page, sources) => {
    const running = run(process.execPath, [cli, "mcp", "login", name], { env, cwd: work });
    const url = await openedBy(opener, running, "codex mcp login");
    await consent(page, url, sources);
    const r = await running;
    if (r.code !== 0 || !r.out.includes(`Successfully logged in to MCP server '${name}'`)) {
      throw new Error(`codex mcp login: exit ${r.code}:\n${r.out.slice(-2000)}`);
    }
    return url.searchParams.get("client_id");
  };
  // call asks `codex app-server` to call schema on the entry: initialize,
  // an ephemeral thread, mcpServer/tool/call.
  const call = async () => {
    const p = track(spawn(process.execPath, [cli, "app-server"], { env, cwd: work, stdio: ["pipe", "pipe", "pipe"] }));
    let err = "";
    p.stderr.on("data", (b) => (err += b));
    const answers = new Map();
    const lines = createInterface({ input: p.stdout });
    lines.on("line", (l) => {
      let m;
      try {
        m = JSON.parse(l);
      } catch {
        return;
      }
      if (m.id !== undefined && answers.has(m.id)) answers.get(m.id)(m);
    });
    const exited = new Promise((r) => p.on("exit", (code) => r({ error: { message: `codex app-server exited ${code}:\n${err.slice(-2000)}` } })));
    let next = 0;
    const request = async (method, params) => {
      const id = next++;
      const answer = new Promise((r) => answers.set(id, r));
      p.stdin.write(JSON.stringify({ id, method, params }) + "\n");
      const m = await Promise.race([answer, exited]);
      if (m.error) throw new Error(`codex app-server ${method}: ${JSON.stringify(m.error).slice(0, 2000)}`);
      return m.result;
    };
    try {
      await request("initialize", { clientInfo: { name: "oauth-e2e", version: "1" } });
      p.stdin.write(JSON.stringify({ method: "initialized" }) + "\n");
      const { thread } = await request("thread/start", { cwd: work, ephemeral: true });
      const res = await request("mcpServer/tool/call", { threadId: thread.id, server: name, tool: "schema", arguments: {} });
      servedSchema(res.isError ? JSON.stringify(res) : res.content?.[0]?.text ?? "", "codex mcpServer/tool/call schema");
    } finally {
      p.stdin.end();
      p.kill("SIGTERM");
    }
  };

  return {
    name: "Codex",
    async signIn(base, page) {
      writeFileSync(join(codexHome, "config.toml"),
        `mcp_oauth_credentials_store = "file"\n\n[mcp_servers.${name}]\nurl = "${base}/mcp"\n`);
      await login(page, 1);
      await call();
      return "mcp login (consent), schema served through codex app-server";
    },
    async afterRestart(base, page) {
      const first = stored();
      await call();
      if (stored().access_token !== first.access_token) throw new Error("Codex replaced its access token after the restart");
      const all = readJSON(credentials);
      for (const v of Object.values(all)) if (v.server_name === name) v.expires_at = Date.now() - 60_000;
      writeJSON(credentials, all);
      await call();
      if (stored().access_token === first.access_token) throw new Error("Codex did not refresh its expired access token");
      // Codex registers on every mcp login (0.171): either way it must be served.
      const asked = await login(page, 2);
      await call();
      const how = asked === first.client_id ? "with its stored registration" : "registering again";
      return `stored token served; expired token refreshed; mcp login again (${how})`;
    },
  };
}

try {
  const port = await freePort();
  let base = await demo.start(port);
  const browser = await launchBrowser(chromiumPath);
  cleanups.push(() => browser.close());
  const opener = await systemBrowser(scratch("browser"));
  cleanups.push(() => opener.close());
  let t = Date.now();
  const step = (msg) => {
    console.log(`ok   ${msg} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
    t = Date.now();
  };
  // OAUTH_E2E_HOSTS="claude mcp-remote codex" (the default) picks hosts.
  const picked = (process.env.OAUTH_E2E_HOSTS || "claude mcp-remote codex").split(/[\s,]+/).filter(Boolean);
  const all = { claude: claudeCode, "mcp-remote": mcpRemote, codex };
  const unknown = picked.filter((h) => !all[h]);
  if (unknown.length) fail(`OAUTH_E2E_HOSTS: unknown ${unknown.join(", ")}; known: ${Object.keys(all).join(", ")}`);
  const hosts = picked.map((h) => all[h](opener));
  for (const h of hosts) if (h.refusal) step(`${h.name}: ${await h.refusal()}`);
  for (const h of hosts) step(`${h.name}: ${await h.signIn(base, browser.page)}`);
  await demo.stop();
  base = await demo.start(port);
  step("the demo restarted on the same port");
  for (const h of hosts) step(`${h.name} after the restart: ${await h.afterRestart(base, browser.page)}`);
  cleanup();
  process.exit(0);
} catch (e) {
  fail(e?.stack ?? String(e));
}
