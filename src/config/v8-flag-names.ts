// Whether this Node's V8 knows a flag. V8 answers an unknown flag in setFlagsFromString with a line on stdout and
// goes on as if it had not been given, so --v8-flags checks each name here to refuse it with exit 2 instead.
import { execFileSync } from "node:child_process";

/** The names the installs pass: known without asking V8 (asking costs a second node process, ~40 ms). */
export const INSTALLED_V8_FLAGS: ReadonlySet<string> = new Set([
  "opt",
  "turbofan",
  "maglev",
  "sparkplug",
  "lite-mode",
  "max-lazy",
  "invocation-count-for-turbofan",
]);

let listed: ReadonlySet<string> | undefined;

/** `--no-opt`, `--opt`, `--max_lazy=1` → the name V8 lists it under (`opt`, `opt`, `max-lazy`). */
export function v8FlagName(flag: string): string {
  const name = (flag.replace(/^--/, "").split("=")[0] ?? "").replaceAll("_", "-");
  return name.startsWith("no-") ? name.slice(3) : name;
}

/** `node --v8-options` lists every flag as "  --name (what it does)". */
export function listedV8Flags(options: string): ReadonlySet<string> {
  return new Set([...options.matchAll(/^ {2}--([a-z0-9_-]+)/gm)].map((match) => v8FlagName(`--${match[1]}`)));
}

/** Whether V8 takes the flag; only a name the installs do not pass runs `node --v8-options` (once). */
export function isV8Flag(flag: string): boolean {
  const name = v8FlagName(flag);
  if (INSTALLED_V8_FLAGS.has(name)) return true;
  listed ??= listedV8Flags(execFileSync(process.execPath, ["--v8-options"], { encoding: "utf8" }));
  return listed.has(name);
}
