#!/usr/bin/env node
// npm.mjs builds the npm distribution from release binaries, in the pattern
// esbuild made usual: one launcher package whose bin starts the native
// binary, and one package per platform (os/cpu set) holding only that
// binary, listed as optionalDependencies so npm installs just the one that
// fits the machine.
//
//   node scripts/release/npm.mjs --version 1.2.3 --out build/npm \
//     [--dist dist] [--bin linux/amd64=path/to/pdpp-mcp ...]
//
// --dist reads goreleaser's dist/pdpp-mcp_<goos>_<goarch>*/ folders; --bin
// names a binary directly. A platform with no binary gets no package, but the
// launcher still lists every platform: the set it supports does not depend on
// what one build produced.
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const launcherName = "pdpp-mcp";
export const mcpName = "io.github.pdpp-mcp/pdpp-mcp";
const scope = "@pdpp-mcp";
const repository = { type: "git", url: "git+https://github.com/pdpp-mcp/pdpp-mcp.git" };

// Go's GOOS/GOARCH to Node's process.platform/process.arch.
export const platforms = [
  { goos: "linux", goarch: "amd64", os: "linux", cpu: "x64" },
  { goos: "linux", goarch: "arm64", os: "linux", cpu: "arm64" },
  { goos: "darwin", goarch: "amd64", os: "darwin", cpu: "x64" },
  { goos: "darwin", goarch: "arm64", os: "darwin", cpu: "arm64" },
  { goos: "windows", goarch: "amd64", os: "win32", cpu: "x64" },
  { goos: "windows", goarch: "arm64", os: "win32", cpu: "arm64" },
];
const pkgName = (p) => `${scope}/${p.os}-${p.cpu}`;
const exe = (p) => (p.goos === "windows" ? "pdpp-mcp.exe" : "pdpp-mcp");

function parseArgs(argv) {
  const o = { bins: new Map(), out: "build/npm" };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--version") o.version = val().replace(/^v/, "");
    else if (a === "--out") o.out = val();
    else if (a === "--dist") o.dist = val();
    else if (a === "--bin") {
      const [target, path] = val().split("=");
      o.bins.set(target, path);
    } else throw new Error(`unknown argument ${a}`);
  }
  if (!o.version || !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(o.version)) {
    throw new Error(`--version must be a semantic version, got ${o.version}`);
  }
  if (o.dist) {
    for (const d of readdirSync(o.dist)) {
      const m = /^pdpp-mcp_([a-z]+)_([a-z0-9]+)/.exec(d);
      if (!m) continue;
      const target = `${m[1]}/${m[2]}`;
      const bin = join(o.dist, d, m[1] === "windows" ? "pdpp-mcp.exe" : "pdpp-mcp");
      if (!o.bins.has(target) && existsSync(bin)) o.bins.set(target, bin);
    }
  }
  for (const t of o.bins.keys()) {
    if (!platforms.some((p) => `${p.goos}/${p.goarch}` === t)) throw new Error(`unsupported target ${t}`);
  }
  if (o.bins.size === 0) throw new Error("no binaries: pass --dist or --bin");
  return o;
}

const common = (version) => ({
  version,
  license: "Apache-2.0",
  repository,
  homepage: "https://github.com/pdpp-mcp/pdpp-mcp#readme",
});

function writeJSON(path, v) {
  writeFileSync(path, JSON.stringify(v, null, 2) + "\n");
}

function launcherSource(version) {
  const table = Object.fromEntries(platforms.map((p) => [`${p.os}-${p.cpu}`, [pkgName(p), exe(p)]]));
  return `#!/usr/bin/env node
// Starts the pdpp-mcp binary from the platform package npm installed and
// gets out of the way: stdin, stdout (the MCP channel) and stderr are the
// child's own descriptors, arguments pass unchanged, signals are forwarded,
// and the exit status (or the signal that ended it) is passed back.
"use strict";
const { spawn } = require("node:child_process");

const packages = ${JSON.stringify(table, null, 2)};
const version = ${JSON.stringify(version)};

function binaryPath() {
  // For packagers and tests: run a binary from elsewhere.
  if (process.env.PDPP_MCP_BINARY) return process.env.PDPP_MCP_BINARY;
  const key = process.platform + "-" + process.arch;
  const entry = packages[key];
  if (!entry) {
    process.stderr.write("pdpp-mcp: no binary is published for " + key + "; build it with Go: CGO_ENABLED=0 go install github.com/pdpp-mcp/pdpp-mcp/cmd/pdpp-mcp@latest\\n");
    process.exit(1);
  }
  try {
    return require.resolve(entry[0] + "/bin/" + entry[1]);
  } catch {
    // npm installs the one platform package that fits as an optional
    // dependency; when it is absent, say which one and why it may be.
    const want = entry[0] + "@" + version;
    process.stderr.write(
      "pdpp-mcp: the binary for " + process.platform + " " + process.arch + " comes in the package " + want +
        ", and it is not in node_modules (searched from " + __dirname + "). npm installs it as an optional " +
        "dependency of pdpp-mcp and skips it without failing when: the install ran with --no-optional, " +
        "--omit=optional or optional=false in .npmrc; its download failed; or its os/cpu do not match this " +
        "Node (a lockfile made on another platform, or Node built for another architecture). Install it " +
        "again with optional dependencies (npm install pdpp-mcp@" + version + " or npx -y pdpp-mcp@" + version +
        "), or set PDPP_MCP_BINARY to a pdpp-mcp binary.\\n",
    );
    process.exit(1);
  }
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: "inherit", windowsHide: true });
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
const forward = (sig) => {
  child.kill(sig);
};
for (const sig of forwarded) process.on(sig, forward);
child.on("error", (err) => {
  process.stderr.write("pdpp-mcp: cannot start the binary: " + err.message + "\\n");
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    // End the same way, so the host sees what the server saw.
    for (const sig of forwarded) process.removeListener(sig, forward);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code);
});
`;
}

function build(o) {
  const out = resolve(o.out);
  rmSync(out, { recursive: true, force: true });
  const optional = {};
  for (const p of platforms) optional[pkgName(p)] = o.version;

  const ldir = join(out, "pdpp-mcp");
  mkdirSync(join(ldir, "bin"), { recursive: true });
  writeFileSync(join(ldir, "bin", "pdpp-mcp.js"), launcherSource(o.version));
  chmodSync(join(ldir, "bin", "pdpp-mcp.js"), 0o755);
  copyFileSync(join(root, "LICENSE"), join(ldir, "LICENSE"));
  writeFileSync(
    join(ldir, "README.md"),
    "# pdpp-mcp\n\nAn MCP server for a PDPP grant: read-only tools over stdio.\n\n" +
      "    npx -y pdpp-mcp --demo\n    npx -y pdpp-mcp --provider-url https://pdpp.example.com\n\n" +
      "This package starts the native binary from the matching platform package.\n" +
      "Documentation: https://github.com/pdpp-mcp/pdpp-mcp#readme\n",
  );
  writeJSON(join(ldir, "package.json"), {
    name: launcherName,
    ...common(o.version),
    description: "MCP server for a PDPP grant: read-only tools over stdio (native binary launcher)",
    mcpName,
    bin: { "pdpp-mcp": "bin/pdpp-mcp.js" },
    files: ["bin/", "LICENSE", "README.md"],
    engines: { node: ">=18" },
    optionalDependencies: optional,
  });
  const built = [ldir];

  for (const p of platforms) {
    const src = o.bins.get(`${p.goos}/${p.goarch}`);
    if (!src) continue;
    const dir = join(out, `${p.os}-${p.cpu}`);
    mkdirSync(join(dir, "bin"), { recursive: true });
    copyFileSync(src, join(dir, "bin", exe(p)));
    chmodSync(join(dir, "bin", exe(p)), 0o755);
    copyFileSync(join(root, "LICENSE"), join(dir, "LICENSE"));
    writeFileSync(join(dir, "README.md"), `# ${pkgName(p)}\n\nThe pdpp-mcp binary for ${p.os} ${p.cpu}. Install \`pdpp-mcp\` instead.\n`);
    writeJSON(join(dir, "package.json"), {
      name: pkgName(p),
      ...common(o.version),
      description: `The pdpp-mcp binary for ${p.os} ${p.cpu}`,
      os: [p.os],
      cpu: [p.cpu],
      files: ["bin/", "LICENSE", "README.md"],
      preferUnplugged: true,
    });
    built.push(dir);
  }
  return built;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    for (const d of build(parseArgs(process.argv.slice(2)))) console.log(d);
  } catch (err) {
    console.error(`npm.mjs: ${err.message}`);
    process.exit(64);
  }
}
