// --startup-taint*: which taint keys to manage, and how, checked against the rest of the configuration.
import { GENERIC_STARTUP_TAINT_KEY } from "../detect/presets.js";
import type { Rule } from "../detect/rule.js";
import { invalidValue } from "./config-error.js";
import type { FlagName, FlagValues } from "./flags.js";
import type { Setting } from "./read-args.js";

export type StartupTaintMode = "bootstrap-only" | "continuous";

export type StartupTaintConfig = {
  readonly mode: StartupTaintMode;
  /** The taint keys managed, never empty; the first is the one added in continuous mode. */
  readonly keys: readonly string[];
  /** continuous: how long an agent must stay NotReady before its node is tainted again. */
  readonly notReadyAfterMs: number;
  /** continuous: the largest share of nodes that may carry a configured key at once. */
  readonly maxShare: number;
};

/** A rule's own startup taint (the presets name theirs), else the generic one. */
const defaultKey = (rule: Rule): string => rule.startupTaintKey ?? GENERIC_STARTUP_TAINT_KEY;

export function startupTaintConfig(
  values: FlagValues,
  at: (name: FlagName) => Setting,
  rules: readonly Rule[],
  context: { readonly gateOn: boolean; readonly nodeName: string },
): StartupTaintConfig | undefined {
  const mode = values["startup-taint"];
  if (mode === "off") return undefined;
  const setting = at("startup-taint");
  if (!context.gateOn) {
    throw invalidValue(setting.source, setting.text, "needs the CNI agents watched: --cni-agent-gate=on");
  }
  if (mode === "continuous" && context.nodeName !== "") {
    throw invalidValue(
      setting.source,
      setting.text,
      "continuous needs every node in view for its share cap: not with --node-name (use bootstrap-only per node)",
    );
  }
  const given = values["startup-taint-keys"];
  const keys = given.length > 0 ? [...new Set(given)] : [...new Set(rules.map(defaultKey))];
  return Object.freeze({
    mode,
    keys: Object.freeze(keys),
    notReadyAfterMs: values["startup-taint-not-ready-after"],
    maxShare: values["startup-taint-max-share"],
  });
}
