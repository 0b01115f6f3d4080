// V8's code cache of the bundled app (image/bundle.sh): every function compiled, made at build time, read at each
// start. Hand-written rather than Node's compile cache (NODE_COMPILE_CACHE): Node makes its cache right after a
// module's compilation, so it holds the top-level code and none of the functions a start then runs; each of those
// was parsed and compiled again at every start (~25% of a per-node start's CPU, bench/README.md). A vm.Script
// compiled with every function eagerly gives V8 a cache of all of them, which the start deserializes instead.
import { hash } from "node:crypto";
import { readFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { constants, Script } from "node:vm";

/** What became of the cache at a start: used, refused by V8 (another Node or V8 flags), absent, or another app's. */
export type CodeCacheVerdict = "accepted" | "rejected" | "absent" | "stale";

/** The CommonJS module function a compiled bundle evaluates to. */
export type CommonJsModule = (
  exports: object,
  require: NodeJS.Require,
  module: { exports: object },
  filename: string,
  dirname: string,
) => void;

// V8 checks a cache against the source's length only: the header names the exact source it was made from.
const MAGIC = "cni-repair code cache 1\n";

/** The cache beside the app, per architecture: an image's other architecture finds none and compiles as before. */
export function codeCacheFile(app: string, arch: string = process.arch): string {
  return `${app}.${arch}.v8cache`;
}

function headerFor(source: Buffer): Buffer {
  return Buffer.from(`${MAGIC}${hash("sha256", source)}\n`);
}

/** The app's source as Node's CommonJS loader would wrap it (a leading #! line is the bundler's, and refused here). */
function compile(source: Buffer, filename: string, cachedData?: Buffer): Script {
  return new Script(`(function (exports, require, module, __filename, __dirname) { ${source.toString("utf8")}\n})`, {
    filename,
    ...(cachedData !== undefined && { cachedData }),
    // Dynamic import() from the app resolves as it would from a file Node loaded itself.
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
}

/**
 * The cache of `source` with every function compiled. V8 has no per-script switch for that: --no-lazy is set
 * around the compilation and reset before the cache is made, so the cache carries the flags a start runs with and
 * V8 accepts it. `filename` is only recorded (stack traces name the file a start loads): a fixed one keeps the
 * image reproducible.
 */
export function makeCodeCache(source: Buffer, filename: string): Buffer {
  let script: Script;
  setFlagsFromString("--no-lazy");
  try {
    script = compile(source, filename);
  } finally {
    setFlagsFromString("--lazy");
  }
  return Buffer.concat([headerFor(source), script.createCachedData()]);
}

/** The V8 data of `cache` if it was made from `source`. */
function cachedDataFor(source: Buffer, cache: Buffer): Buffer | undefined {
  const header = headerFor(source);
  return cache.subarray(0, header.length).equals(header) ? cache.subarray(header.length) : undefined;
}

function readIfPresent(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Compiles the app at `file` with its cache when it has one that fits; without one it compiles as Node would. */
export function compileApp(file: string): { run: CommonJsModule; verdict: CodeCacheVerdict } {
  const source = readFileSync(file);
  const cache = readIfPresent(codeCacheFile(file));
  const cachedData = cache === undefined ? undefined : cachedDataFor(source, cache);
  const script = compile(source, file, cachedData);
  const verdict: CodeCacheVerdict =
    cache === undefined
      ? "absent"
      : cachedData === undefined
        ? "stale"
        : script.cachedDataRejected
          ? "rejected"
          : "accepted";
  return { run: script.runInThisContext() as CommonJsModule, verdict };
}
