// Drives a host's OAuth journey against `pdpp-mcp --demo --http`, with no
// token configured: the TypeScript MCP SDK's OAuth client meets the 401
// challenge, discovers the authorization server, registers, and sends the
// person to the consent page, which headless Chromium answers like a
// person (tick sources, press Allow); the code comes back to a loopback
// callback, the SDK exchanges it with its PKCE verifier and the tool call
// is served. Run for one source (a grant-scoped client token) and three (a
// package token served by fan-out); then with Gemini CLI's own MCP OAuth
// provider, which refuses an authorization response without the RFC 9207
// iss; then the demo is restarted on the same port and the first host
// goes on as Claude Code and mcp-remote do: its stored access token is
// served, its stored refresh token rotates, and its stored registration
// authorizes again without registering.
//
//   node e2e.mjs PDPP_MCP_BINARY CHROMIUM
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Demo, consent, freePort, launchBrowser, openedBy, systemBrowser } from "./lib.mjs";

const [binary, chromiumPath] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const deadline = setTimeout(() => fail("no result within 180 s"), 180_000);
deadline.unref();
const demo = new Demo(binary);
let browser, callback, gemini;

function fail(msg) {
  console.error(`FAIL ${msg}`);
  cleanup();
  process.exit(1);
}

function cleanup() {
  demo.kill();
  gemini?.kill("SIGTERM");
  callback?.close();
  browser?.close();
}

// The loopback redirect URI: resolves the next code it receives.
async function startCallback() {
  let waiting;
  callback = createServer((req, res) => {
    const u = new URL(req.url, "http://127.0.0.1");
    res.end("You can close this window.");
    // Only the redirect counts: the browser also asks this origin for
    // /favicon.ico, which must not be taken for an answer without a code.
    if (u.pathname === "/callback") waiting?.(u.searchParams);
  });
  await new Promise((r) => callback.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${callback.address().port}/callback`,
    next: () => new Promise((r) => (waiting = r)),
  };
}

// An OAuthClientProvider as a host keeps one: in memory, per server.
class Provider {
  constructor(redirectUrl) {
    this.redirectUrl = redirectUrl;
    this.store = {};
  }
  get clientMetadata() {
    return {
      client_name: "pdpp-mcp oauth e2e",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() { return this.store.client; }
  saveClientInformation(c) { this.store.client = c; }
  tokens() { return this.store.tokens; }
  saveTokens(t) { this.store.tokens = t; }
  redirectToAuthorization(u) { this.onRedirect?.(u); }
  saveCodeVerifier(v) { this.store.verifier = v; }
  codeVerifier() { return this.store.verifier; }
}

// callTool connects with provider's stored tokens and calls tool.
async function callTool(endpoint, provider, tool, args, want) {
  const client = new Client({ name: "oauth-e2e", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: provider }));
  const res = await client.callTool({ name: tool, arguments: args });
  const text = JSON.stringify(res);
  if (res.isError || !text.includes(want)) fail(`${tool}: ${text.slice(0, 400)}`);
  await client.close();
}

// journey runs the SDK's OAuth flow to a served tool call; provider, when
// given, is a host's stored state (a registration kept across a restart).
async function journey(base, cb, page, sources, tool, args, want, provider) {
  let authURL;
  provider ??= new Provider(cb.url);
  provider.onRedirect = (u) => (authURL = u);
  const endpoint = new URL(base + "/mcp");
  const first = new Client({ name: "oauth-e2e", version: "1" });
  try {
    await first.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: provider }));
    fail("connected without authorization");
  } catch (e) {
    if (!(e instanceof UnauthorizedError) || !authURL) fail(`expected the SDK to start authorization, got ${e}`);
  }
  const got = cb.next();
  await consent(page, authURL, sources);
  const params = await got;
  if (!params.get("code")) fail(`no code in the callback: ${params}`);
  if (params.get("iss") !== base) fail(`callback iss ${params.get("iss")}, want ${base} (RFC 9207)`);

  const transport = new StreamableHTTPClientTransport(endpoint, { authProvider: provider });
  await transport.finishAuth(params.get("code"));
  await callTool(endpoint, provider, tool, args, want);
  return provider;
}

// geminiJourney runs Gemini CLI's MCP OAuth provider (gemini-oauth.mjs)
// with a throwaway HOME; the browser it opens (xdg-open) hands the URL to
// Chromium here. It returns the access token Gemini stored.
async function geminiJourney(base, page) {
  const dir = mkdtempSync(join(tmpdir(), "oauth-e2e-gemini-"));
  const opener = await systemBrowser(dir);
  try {
    const bundle = join(here, "node_modules", "@google", "gemini-cli", "bundle");
    gemini = spawn(process.execPath, [join(here, "gemini-oauth.mjs"), bundle, base + "/mcp"], {
      env: { ...process.env, HOME: join(dir, "home"), PATH: `${opener.bin}:${process.env.PATH}`, CI: "", NO_COLOR: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    gemini.stdout.on("data", (b) => (out += b));
    gemini.stderr.on("data", (b) => (out += b));
    const exited = new Promise((r) => gemini.on("close", (code) => r({ code, out })));
    gemini.stdin.end("y\n"); // its consent prompt before the browser opens
    await consent(page, await openedBy(opener, exited, "Gemini CLI"), 1);
    await exited;
    gemini = undefined;
    const m = out.match(/GEMINI_TOKEN (\S+)/);
    if (!m) fail(`Gemini CLI did not complete the OAuth flow:\n${out.slice(-2000)}`);
    return m[1];
  } finally {
    opener.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// A stored token as a host holds it, served through the SDK.
class TokenOnly {
  constructor(access) { this.access = access; }
  get redirectUrl() { return "http://127.0.0.1:1/unused"; }
  get clientMetadata() { return { redirect_uris: [this.redirectUrl] }; }
  clientInformation() { return undefined; }
  tokens() { return { access_token: this.access, token_type: "Bearer" }; }
  saveTokens() {}
  redirectToAuthorization() { fail("a stored token was refused"); }
  saveCodeVerifier() {}
  codeVerifier() { return ""; }
}

// refresh spends a stored refresh token at the token endpoint.
async function refresh(base, provider) {
  const res = await fetch(base + "/oauth/token", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: provider.store.tokens.refresh_token,
      client_id: provider.store.client.client_id }),
  });
  const body = await res.json();
  if (res.status !== 200 || !body.access_token) fail(`refresh after the restart: ${res.status} ${JSON.stringify(body)}`);
  provider.store.tokens = body;
}

try {
  const port = await freePort();
  let base = await demo.start(port);
  const cb = await startCallback();
  browser = await launchBrowser(chromiumPath);
  const { page } = browser;
  let t = Date.now();
  const step = (msg) => {
    console.log(`ok   ${msg} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
    t = Date.now();
  };
  const host = await journey(base, cb, page, 1, "schema", {}, "structuredContent");
  step("1 source: 401 -> registration -> consent -> token (iss checked) -> schema served");
  await journey(base, cb, page, 3, "search", { q: "invoice" }, "source_mix=");
  step("3 sources: package token -> search served by fan-out");
  const geminiToken = await geminiJourney(base, page);
  await callTool(new URL(base + "/mcp"), new TokenOnly(geminiToken), "schema", {}, "structuredContent");
  step("Gemini CLI's MCP OAuth provider (enforces RFC 9207 iss) -> token -> schema served");

  await demo.stop();
  base = await demo.start(port);
  await callTool(new URL(base + "/mcp"), host, "schema", {}, "structuredContent");
  step("after a restart: the stored access token is served");
  const stored = host.store.tokens.access_token;
  await refresh(base, host);
  await callTool(new URL(base + "/mcp"), host, "schema", {}, "structuredContent");
  if (host.store.tokens.access_token === stored) fail("the refresh after the restart gave the same access token");
  step("after a restart: the stored refresh token rotates");
  const again = new Provider(cb.url);
  again.store.client = host.store.client;
  await journey(base, cb, page, 3, "search", { q: "invoice" }, "source_mix=", again);
  if (again.store.client !== host.store.client) fail("the host registered again after the restart");
  step("after a restart: the stored registration authorizes again without registering");
  cleanup();
  process.exit(0);
} catch (e) {
  fail(e?.stack ?? String(e));
}
