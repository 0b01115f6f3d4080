// The version this build reports (--version, build_info, user agent), read from package.json.
import { readFileSync } from "node:fs";

function readVersion(): string {
  // dist/src/cli/version.js → package.json at the top of the package.
  const text = readFileSync(new URL("../../../package.json", import.meta.url), "utf8");
  const version = (JSON.parse(text) as { version?: unknown }).version;
  return typeof version === "string" ? version : "0.0.0-unknown";
}

export const VERSION = readVersion();
