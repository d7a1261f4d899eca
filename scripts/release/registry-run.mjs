#!/usr/bin/env node
// registry-run.mjs IMAGE [NAME=VALUE...] -- ENGINE...: start the OCI package
// of packaging/registry/server.json the way an MCP Registry client does, and
// run mcp-smoke.mjs's session on it. The command line is ENGINE (say
// `podman run`), the package's runtimeArguments, IMAGE in place of the
// published identifier, then its packageArguments. NAME=VALUE fills a
// {variable} of an argument's value, or gives the value of a named argument
// that has none (NAME is then the flag, as --provider-url=URL).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
if (sep < 1 || sep === argv.length - 1) {
  console.error("usage: registry-run.mjs IMAGE [NAME=VALUE...] -- ENGINE...");
  process.exit(64);
}
const [image, ...pairs] = argv.slice(0, sep);
const engine = argv.slice(sep + 1);
const given = new Map(pairs.map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)]));
const used = new Set();
const die = (msg) => {
  console.error(`registry-run: ${msg}`);
  process.exit(1);
};

const entry = JSON.parse(readFileSync(join(here, "../../packaging/registry/server.json"), "utf8"));
const pkg = entry.packages.find((p) => p.registryType === "oci");
if (!pkg) die("server.json has no OCI package");

const value = (arg) => {
  let v = arg.value;
  if (v === undefined) {
    const key = arg.name ?? arg.valueHint;
    if (!given.has(key)) {
      if (arg.isRequired) die(`${key} is required: pass ${key}=VALUE`);
      return undefined;
    }
    used.add(key);
    return given.get(key);
  }
  return v.replace(/\{([A-Za-z0-9_]+)\}/g, (whole, name) => {
    const spec = arg.variables?.[name];
    if (!spec) return whole;
    if (given.has(name)) {
      used.add(name);
      return given.get(name);
    }
    if (spec.default !== undefined) return spec.default;
    die(`{${name}} of ${arg.name ?? arg.value} is required: pass ${name}=VALUE`);
  });
};
const expand = (args = []) =>
  args.flatMap((arg) => {
    const v = value(arg);
    if (v === undefined) return [];
    return arg.type === "named" ? [arg.name, v] : [v];
  });

const cmd = [...engine, ...expand(pkg.runtimeArguments), image, ...expand(pkg.packageArguments)];
for (const k of given.keys()) if (!used.has(k)) die(`${k} is not an argument or variable of the OCI package`);
console.log(`registry-run: ${JSON.stringify(cmd)}`);
const child = spawn(process.execPath, [join(here, "mcp-smoke.mjs"), ...cmd], { stdio: "inherit" });
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
