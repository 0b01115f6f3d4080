// What this build reports (the version command, build_info, user agent): package.json's version, and the commit
// that `make build` (or the image build) records in dist/revision.
import { existsSync, readFileSync } from "node:fs";

function readVersion(): string {
  // dist/src/cli/version.js → package.json at the top of the package.
  const text = readFileSync(new URL("../../../package.json", import.meta.url), "utf8");
  const version = (JSON.parse(text) as { version?: unknown }).version;
  return typeof version === "string" ? version : "0.0.0-unknown";
}

function readRevision(): string {
  const file = new URL("../../revision", import.meta.url);
  const revision = existsSync(file) ? readFileSync(file, "utf8").trim() : "";
  return revision || "unknown";
}

export const VERSION = readVersion();
export const REVISION = readRevision();

/** `cni-repair version`: one line, the version first (scripts cut it), then the commit and the Node.js runtime. */
export function versionText(): string {
  return `cni-repair ${VERSION} (commit ${REVISION}, node ${process.version})\n`;
}
