// Runs Gemini CLI's own MCP OAuth provider against URL, headless: it
// discovers, registers, opens the browser (xdg-open, which the caller
// replaces), waits for the callback (where it enforces RFC 9207 iss) and
// exchanges the code. Reads the consent answer ("y") on stdin.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
const [bundle, url] = process.argv.slice(2);
const chunk = readdirSync(bundle).find((f) => f.startsWith("chunk-") && readFileSync(join(bundle, f), "utf8").includes("var MCPOAuthProvider = class"));
const core = await import(join(bundle, chunk));
const provider = new core.MCPOAuthProvider(new core.MCPOAuthTokenStorage());
try {
  const token = await provider.authenticate("pdpp-demo", { enabled: true }, url);
  console.log("GEMINI_TOKEN " + token.accessToken);
  process.exit(0);
} catch (e) {
  console.log("GEMINI_FAIL " + (e?.message ?? e));
  process.exit(1);
}
