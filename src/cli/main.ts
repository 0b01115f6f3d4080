#!/usr/bin/env node
import { parseConfig } from "../config/config.js";
// Entry point of the `cni-repair` command: parse the configuration, then run the command asked for (bare: help).
import { ConfigError } from "../config/config-error.js";
import { helpText } from "../config/help.js";
import { applyV8Flags } from "./v8-flags.js";
import { versionText } from "./version.js";

/**
 * Exit codes: 0 clean stop (and help, bare included), 1 runtime failure, 2 bad configuration (like most CLIs' usage
 * errors).
 */
async function main(): Promise<number> {
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
    // Each command loads only its own modules: a per-node `run` pays for no scan or explain output (yaml).
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

process.exitCode = await main();
