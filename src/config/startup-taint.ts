// --startup-taint*: which taint keys to manage, and how, checked against the rest of the configuration.
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

/** Istio's own untaint controller (istiod) removes this key; Cilium uses node.cilium.io/agent-not-ready. */
export const ISTIO_TAINT_KEY = "cni.istio.io/not-ready";
/** For meshes without a taint of their own (Linkerd, custom rules): documented in docs/startup-taints.md. */
export const GENERIC_TAINT_KEY = "cni-repair.io/agent-not-ready";

const ISTIO_PRESETS = new Set(["istio", "istio-ambient"]);
const defaultKey = (rule: Rule): string => (ISTIO_PRESETS.has(rule.name) ? ISTIO_TAINT_KEY : GENERIC_TAINT_KEY);

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
