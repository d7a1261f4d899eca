// What the journeys share: the demo process, a free port to restart it on,
// headless Chromium answering the consent page like a person, a stand-in
// for the system browser that hands a host's authorization URL to it, and
// child processes run with a bound.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { createServer as createTCPServer } from "node:net";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

// A free loopback port, so that the demo restarts where hosts knew it.
export function freePort() {
  return new Promise((resolve) => {
    const l = createTCPServer().listen(0, "127.0.0.1", () => {
      const { port } = l.address();
      l.close(() => resolve(port));
    });
  });
}

// The demo gateway, `pdpp-mcp --demo --http`, started and stopped on a port.
export class Demo {
  constructor(binary) {
    this.binary = binary;
  }

  // start runs the demo on port and resolves its base URL, read from the
  // start-up line.
  start(port) {
    return new Promise((resolve, reject) => {
      const p = spawn(this.binary, ["--demo", "--http", `127.0.0.1:${port}`, "--log-level", "warn", "--access-log=false"], {
        stdio: ["ignore", "ignore", "pipe"],
      });
      this.proc = p;
      let err = "";
      p.stderr.on("data", (b) => {
        err += b;
        const m = err.match(/serving hosted MCP at (\S+)\/mcp /);
        if (m) resolve(m[1]);
      });
      p.on("exit", (code) => reject(new Error(`pdpp-mcp exited ${code}:\n${err}`)));
    });
  }

  // stop ends the demo and resolves once it has exited.
  stop() {
    const p = this.proc;
    this.proc = undefined;
    if (!p) return Promise.resolve();
    return new Promise((resolve) => {
      p.removeAllListeners("exit");
      if (p.exitCode !== null || p.signalCode !== null) return resolve();
      p.on("exit", resolve);
      p.kill("SIGTERM");
    });
  }

  kill() {
    this.proc?.kill("SIGTERM");
  }
}

// launchBrowser starts headless Chromium with a fresh profile (Playwright
// passes it as --user-data-dir), removed again by close.
export async function launchBrowser(executablePath) {
  const profile = mkdtempSync(join(tmpdir(), "oauth-e2e-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const page = await context.newPage();
  // Also when the journey fails and exits without waiting for close.
  const remove = () => rmSync(profile, { recursive: true, force: true });
  process.on("exit", remove);
  return {
    page,
    close: async () => {
      await context.close().catch(() => {});
      remove();
    },
  };
}

// consent answers the consent page at url like a person: tick the first n
// sources, press Allow. The browser then follows the redirect to the host's
// callback.
export async function consent(page, url, n) {
  await page.goto(url.toString());
  const boxes = page.locator('input[type="checkbox"][name="source"]');
  const listed = await boxes.count();
  if (listed < n) throw new Error(`the consent page lists ${listed} sources, want at least ${n}`);
  for (let i = 0; i < n; i++) await boxes.nth(i).check();
  await page.getByRole("button", { name: "Allow" }).click();
}

// systemBrowser stands in for the browser a host opens: dir/bin holds an
// xdg-open and a browser (for BROWSER) that post the URL they are given to
// a loopback listener here, so that next() resolves the host's
// authorization URL as soon as the host opens it. opened counts them.
export async function systemBrowser(dir) {
  const urls = [];
  const waiting = [];
  const s = { opened: 0 };
  const listener = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      res.end();
      s.opened++;
      const w = waiting.shift();
      if (w) w(body.trim());
      else urls.push(body.trim());
    });
  });
  await new Promise((r) => listener.listen(0, "127.0.0.1", r));
  const to = `http://127.0.0.1:${listener.address().port}/`;
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  const post = "fetch(process.argv[1],{method:'POST',body:process.argv[2]}).then((r)=>process.exit(r.ok?0:1),()=>process.exit(1))";
  const script = `#!/bin/sh\nexec '${process.execPath}' -e "${post}" '${to}' "$1"\n`;
  for (const name of ["xdg-open", "browser"]) {
    writeFileSync(join(bin, name), script);
    chmodSync(join(bin, name), 0o755);
  }
  s.bin = bin;
  s.browser = join(bin, "browser");
  // next resolves the next URL opened; an abort of signal withdraws it.
  s.next = async (signal) => {
    const got = urls.length ? urls.shift() : await new Promise((r) => {
      waiting.push(r);
      signal?.addEventListener("abort", () => {
        const i = waiting.indexOf(r);
        if (i >= 0) waiting.splice(i, 1);
      }, { once: true });
    });
    try {
      return new URL(got);
    } catch {
      throw new Error(`the host opened ${JSON.stringify(got.slice(0, 200))}, not a URL`);
    }
  };
  s.close = () => listener.close();
  return s;
}

// Children still running when a journey fails are stopped on exit.
const running = new Set();
process.on("exit", () => {
  for (const p of running) p.kill("SIGTERM");
});

// track stops p when this process exits first.
export function track(p) {
  running.add(p);
  p.on("exit", () => running.delete(p));
  return p;
}

// run runs a command to its end, bounded by ms, and resolves its exit code
// and its stdout and stderr together.
export function run(cmd, args, { env, cwd, input, ms = 60_000 } = {}) {
  return new Promise((resolve, reject) => {
    const p = track(spawn(cmd, args, { env, cwd, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] }));
    let out = "";
    p.stdout.on("data", (b) => (out += b));
    p.stderr.on("data", (b) => (out += b));
    if (input !== undefined) p.stdin.end(input);
    const timer = setTimeout(() => {
      p.kill("SIGKILL");
      reject(new Error(`${[cmd, ...args].join(" ")}: no exit within ${ms / 1000} s:\n${out.slice(-2000)}`));
    }, ms);
    p.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    p.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

// openedBy resolves the URL the host opens in the browser, or fails with
// the host's output when the host ends first.
export async function openedBy(browser, running, what) {
  const ended = new AbortController();
  const r = await Promise.race([browser.next(ended.signal), running]);
  if (r instanceof URL) return r;
  ended.abort();
  const how = typeof r.code === "number" ? `exit ${r.code}` : r.code;
  throw new Error(`${what} ended (${how}) before opening the browser:\n${r.out.slice(-3000)}`);
}

// notOpenedBy resolves what running resolves, or fails as soon as the host
// opens the browser (to sign in again, when it should not need to).
export async function notOpenedBy(browser, running, what) {
  const done = new AbortController();
  const r = await Promise.race([browser.next(done.signal), running]);
  done.abort();
  if (r instanceof URL) throw new Error(`${what} opened the browser to sign in again: ${r.origin}${r.pathname}`);
  return r;
}
