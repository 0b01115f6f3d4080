// V8 flags set after start-up's modules are loaded, instead of on node's command line.
//
// V8 checks every code cache against a hash of its flags: Node's own, for its built-in modules (embedded in the
// binary, made with the default flags), and the image's code cache of the app (src/boot/code-cache.ts). A flag
// on the command line (--no-opt, say) changes that hash from the first line, and each start then compiles Node's
// built-ins and the app from source: ~50 ms of a per-node instance's start-up CPU (bench/README.md). Set here, once
// the run command's modules are compiled, the flags still shape everything the controller does after.
import { setFlagsFromString } from "node:v8";

/**
 * Sets them (no-op when none): --v8-flags once the modules are loaded (modules loaded later are compiled without a
 * cache: load everything first), --v8-flags-after-sync once the caches have synced.
 */
export function applyV8Flags(flags: readonly string[]): void {
  if (flags.length > 0) setFlagsFromString(flags.join(" "));
}
