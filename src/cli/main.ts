#!/usr/bin/env node
import { parseConfig } from "../config/config.js";
// Entry point of the `cni-repair` command: parse the configuration, then run the command asked for (bare: help).
import { ConfigError } from "../config/config-error.js";
import { helpText } from "../config/help.js";
import { exitWhenDrained } from "./exit-when-drained.js";
import { unsupportedNode } from "./node-support.js";
import { applyV8Flags } from "./v8-flags.js";
import { versionText } from "./version.js";

/**
 * Exit codes: 0 clean stop (and help, bare included), 1 runtime failure, 2 bad configuration (like most CLIs' usage
 * errors).
 */
async function main(): Promise<number> {
  const unsupported = unsupportedNode();
  if (unsupported !== undefined) {
    console.error(`cni-repair: ${unsupported}`);
    return 1;
  }
  let parsed: ReturnType<typeof parseConfig>;
  try {
    parsed = parseConfig(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`cni-repair: ${error.message}\nRun 'cni-repair help [command]' for the commands and their flags.`);
    return 2;
  }
  switch (parsed.command) {
    case "help":
      process.stdout.write(helpText(parsed.helpFor));
      return 0;
    case "version":
      process.stdout.write(versionText());
      return 0;
    // Each command evaluates only its own modules: a per-node `run` pays for no scan or explain output (yaml).
    case "run": {
      const { runController } = await import("./run-controller.js");
      // Only now: flags given earlier would make V8 refuse the code caches of the modules just loaded.
      applyV8Flags(parsed.config.v8Flags);
      return await runController(parsed.config);
    }
    case "scan":
      return await (await import("./run-scan.js")).runScan(parsed.config);
    case "explain":
      // readArgs always sets the target for explain.
      return parsed.target ? await (await import("./run-explain.js")).runExplain(parsed.config, parsed.target) : 2;
  }
}

// A promise rather than a top-level await: the image's bundle is CommonJS (image/bundle.sh). A rejection ends the
// process as an uncaught error (exit 1); a main() that never settles still exits 13, as an unsettled top-level
// await would, so a command that stopped without finishing never looks like a clean stop.
let settled = false;
process.once("exit", () => {
  if (settled || process.exitCode !== undefined) return;
  console.error("cni-repair: the command ended without finishing (exit 13)");
  process.exitCode = 13;
});
main().then(
  (code) => {
    settled = true;
    process.exitCode = code;
    exitWhenDrained();
  },
  (error: unknown) => {
    settled = true;
    throw error;
  },
);
