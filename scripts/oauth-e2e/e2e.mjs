// Drives a host's OAuth journey against `pdpp-mcp --demo --http`, with no
// token configured: the TypeScript MCP SDK's OAuth client meets the 401
// challenge, discovers the authorization server, registers, and sends the
// person to the consent page, which headless Chromium answers like a
// person (tick sources, press Allow); the code comes back to a loopback
// callback, the SDK exchanges it with its PKCE verifier and the tool call
// is served. Run twice: one source (a grant-scoped client token) and three
// sources (a package token served by fan-out).
//
//   node e2e.mjs PDPP_MCP_BINARY CHROMIUM
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { chromium } from "playwright-core";

const [binary, chromiumPath] = process.argv.slice(2);
const deadline = setTimeout(() => fail("no result within 90 s"), 90_000);
deadline.unref();
let server, browser, callback, profile;

function fail(msg) {
  console.error(`FAIL ${msg}`);
  cleanup();
  process.exit(1);
}

function cleanup() {
  server?.kill("SIGTERM");
  callback?.close();
  browser?.close().catch(() => {});
  if (profile) rmSync(profile, { recursive: true, force: true });
}

// Starts the demo gateway on a free loopback port and reads its URL from the
// start-up line.
function startDemo() {
  return new Promise((resolve, reject) => {
    server = spawn(binary, ["--demo", "--http", "127.0.0.1:0", "--log-level", "warn", "--access-log=false"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let err = "";
    server.stderr.on("data", (b) => {
      err += b;
      const m = err.match(/serving hosted MCP at (\S+)\/mcp /);
      if (m) resolve(m[1]);
    });
    server.on("exit", (code) => reject(new Error(`pdpp-mcp exited ${code}:\n${err}`)));
  });
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
  constructor(redirectUrl, onRedirect) {
    this.redirectUrl = redirectUrl;
    this.onRedirect = onRedirect;
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
  redirectToAuthorization(u) { this.onRedirect(u); }
  saveCodeVerifier(v) { this.store.verifier = v; }
  codeVerifier() { return this.store.verifier; }
}

async function journey(base, cb, page, sources, tool, args, want) {
  let authURL;
  const provider = new Provider(cb.url, (u) => (authURL = u));
  const endpoint = new URL(base + "/mcp");
  const first = new Client({ name: "oauth-e2e", version: "1" });
  try {
    await first.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: provider }));
    fail("connected without authorization");
  } catch (e) {
    if (!(e instanceof UnauthorizedError) || !authURL) fail(`expected the SDK to start authorization, got ${e}`);
  }
  // The person: read the consent page, tick the sources, allow.
  const got = cb.next();
  await page.goto(authURL.toString());
  const boxes = page.locator('input[type="checkbox"][name="source"]');
  if ((await boxes.count()) < sources) fail(`consent page lists fewer than ${sources} sources`);
  for (let i = 0; i < sources; i++) await boxes.nth(i).check();
  await page.getByRole("button", { name: "Allow" }).click();
  const params = await got;
  if (!params.get("code")) fail(`no code in the callback: ${params}`);

  const transport = new StreamableHTTPClientTransport(endpoint, { authProvider: provider });
  await transport.finishAuth(params.get("code"));
  const client = new Client({ name: "oauth-e2e", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: provider }));
  const res = await client.callTool({ name: tool, arguments: args });
  const text = JSON.stringify(res);
  if (res.isError || !text.includes(want)) fail(`${tool}: ${text.slice(0, 400)}`);
  await client.close();
  console.log(`ok   ${sources} source(s): 401 -> registration -> consent -> token -> ${tool} served`);
}

try {
  const base = await startDemo();
  const cb = await startCallback();
  profile = mkdtempSync(join(tmpdir(), "oauth-e2e-chromium-"));
  // A fresh profile each run (Playwright passes it as --user-data-dir).
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const page = await browser.newPage();
  await journey(base, cb, page, 1, "schema", {}, "structuredContent");
  await journey(base, cb, page, 3, "search", { q: "invoice" }, "source_mix=");
  cleanup();
  process.exit(0);
} catch (e) {
  fail(e?.stack ?? String(e));
}
