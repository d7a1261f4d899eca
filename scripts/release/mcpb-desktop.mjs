#!/usr/bin/env node
// mcpb-desktop.mjs DIR CONFIG_JSON: start the server an unpacked bundle's
// manifest names, with the command line and environment filled in the way
// Claude Desktop fills them today, and run mcp-smoke.mjs's session on it.
//
// CONFIG_JSON holds what the person entered, by user_config key; a key that
// is absent was left unset, "" was left blank. Claude Desktop currently:
//   - substitutes ${__dirname}, ${HOME} and the other system variables in
//     mcp_config's command, args and env;
//   - substitutes ${user_config.KEY} with the person's value when there is
//     one, even a blank one;
//   - otherwise with the field's default, as written: system variables inside
//     a default are not substituted (so "${HOME}/x" arrives as that text);
//   - otherwise leaves ${user_config.KEY} in place, as text.
// The last two are reported upstream as bugs; a bundle must start under them.
// The server runs with the working directory given by MCPB_CWD (default: the
// caller's), as Desktop starts servers wherever it happens to be.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";

const [dir, configJSON] = process.argv.slice(2);
if (!dir || configJSON === undefined) {
  console.error("usage: mcpb-desktop.mjs DIR CONFIG_JSON");
  process.exit(64);
}
const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
const given = JSON.parse(configJSON);
const fields = manifest.user_config ?? {};
for (const k of Object.keys(given)) {
  if (!(k in fields)) throw new Error(`the manifest has no user_config.${k}`);
}

const home = process.env.HOME || homedir();
const system = {
  __dirname: dir,
  HOME: home,
  DESKTOP: join(home, "Desktop"),
  DOCUMENTS: join(home, "Documents"),
  DOWNLOADS: join(home, "Downloads"),
  pathSeparator: sep,
  "/": sep,
};
const fill = (s) =>
  s.replace(/\$\{([^}]+)\}/g, (whole, name) => {
    if (name.startsWith("user_config.")) {
      const key = name.slice("user_config.".length);
      if (Object.hasOwn(given, key)) return String(given[key]);
      if (fields[key] && "default" in fields[key]) return String(fields[key].default);
      return whole;
    }
    return Object.hasOwn(system, name) ? system[name] : whole;
  });

const cfg = manifest.server.mcp_config;
const command = fill(cfg.command);
const args = (cfg.args ?? []).map(fill);
const env = { ...process.env };
for (const [k, v] of Object.entries(cfg.env ?? {})) env[k] = fill(v);
console.log(`mcpb-desktop: ${JSON.stringify([command, ...args])} env ${JSON.stringify(Object.fromEntries(Object.keys(cfg.env ?? {}).map((k) => [k, env[k]])))}`);

const smoke = join(dirname(fileURLToPath(import.meta.url)), "mcp-smoke.mjs");
const child = spawn(process.execPath, [smoke, command, ...args], {
  stdio: "inherit",
  env,
  cwd: process.env.MCPB_CWD || process.cwd(),
});
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
