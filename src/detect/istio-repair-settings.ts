// Istio's own repair of broken pods, as its CNI agent is configured: the istio-cni-config ConfigMap (or, from older
// charts, the env of the istio-cni-node DaemonSet). Pure: raw key/value pairs in, settings and warnings out.

/** The rule Istio's own repair covers (the istio preset's sidecar validator). */
export const ISTIO_RULE = "istio";

/** The ConfigMap Istio's chart writes in the CNI agent's namespace; its keys are the agent's env. */
export const ISTIO_CNI_CONFIGMAP = "istio-cni-config";
/** The CNI agent's DaemonSet, whose env carries the same keys in charts without the ConfigMap. */
export const ISTIO_CNI_DAEMONSET = "istio-cni-node";

/** The keys Istio reads, with Istio's defaults when a key is absent. */
const KEYS = {
  enabled: { key: "REPAIR_ENABLED", default: true },
  repairPods: { key: "REPAIR_REPAIR_PODS", default: true },
  deletePods: { key: "REPAIR_DELETE_PODS", default: false },
  labelPods: { key: "REPAIR_LABEL_PODS", default: false },
} as const;
type Setting = keyof typeof KEYS;

export type IstioRepairSettings = {
  /** Where they were read: "ConfigMap kube-system/istio-cni-config". */
  readonly source: string;
  readonly enabled: boolean;
  readonly repairPods: boolean;
  readonly deletePods: boolean;
  readonly labelPods: boolean;
};

/** What Istio does with a broken pod, by its precedence: repair in place, else delete, else label. */
export type IstioRepairMode = "in_place" | "delete" | "label" | "off" | "unknown";
export const ISTIO_REPAIR_MODES: readonly IstioRepairMode[] = ["in_place", "delete", "label", "off", "unknown"];

/** The evidence a delete in place of Istio's repair rests on: a run started after Istio's chance failed too, or it can never run again. */
export const FALLBACK_BASES = ["failed_again", "never_restarts"] as const;
export type FallbackBasis = (typeof FALLBACK_BASES)[number];

/**
 * What is known of Istio's repair: read (detected), no Istio CNI agent and no settings anywhere (absent), or not
 * known (unknown: not listed yet, forbidden, an agent running without settings that say how it repairs, or agents
 * that repair differently). Unknown is treated like in-place repair: the safe side beside an Istio that may be
 * repairing these pods itself.
 */
export type IstioRepairState =
  | { readonly kind: "detected"; readonly settings: IstioRepairSettings }
  | { readonly kind: "absent" }
  | { readonly kind: "unknown"; readonly why: string };

export function istioRepairMode(state: IstioRepairState): IstioRepairMode {
  if (state.kind === "absent") return "off";
  if (state.kind === "unknown") return "unknown";
  const { enabled, repairPods, deletePods, labelPods } = state.settings;
  if (!enabled) return "off";
  if (repairPods) return "in_place";
  if (deletePods) return "delete";
  return labelPods ? "label" : "off";
}

/** One line for logs and explain: "in_place (ConfigMap istio-system/istio-cni-config: REPAIR_ENABLED=true, ...)". */
export function describeIstioRepair(state: IstioRepairState): string {
  switch (state.kind) {
    case "absent":
      return "off (no Istio CNI agent, no istio-cni-config ConfigMap and no istio-cni-node DaemonSet)";
    case "unknown":
      return `unknown (${state.why}); held as if Istio repairs in place`;
    case "detected": {
      const s = state.settings;
      const values = (Object.keys(KEYS) as Setting[]).map((name) => `${KEYS[name].key}=${s[name]}`).join(", ");
      return `${istioRepairMode(state)} (${s.source}: ${values})`;
    }
  }
}

// The spellings Go's strconv.ParseBool accepts, which is how Istio reads these variables.
const TRUE = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const FALSE = new Set(["0", "f", "F", "FALSE", "false", "False"]);

export type ParsedSettings = {
  readonly settings: IstioRepairSettings;
  /** One per value that is not a boolean: "REPAIR_DELETE_PODS=\"yes\" is not a boolean; Istio's default false applies". */
  readonly warnings: readonly string[];
};

/**
 * The settings from the keys Istio reads; undefined when none of them is set (nothing says Istio repairs). Absent
 * keys take Istio's defaults; a value that is not a boolean takes the default too, with a warning naming it.
 */
export function parseIstioRepair(
  values: Readonly<Record<string, string | undefined>>,
  source: string,
  options: { readonly requireAKey: boolean },
): ParsedSettings | undefined {
  const names = Object.keys(KEYS) as Setting[];
  if (options.requireAKey && names.every((name) => values[KEYS[name].key] === undefined)) return undefined;
  const warnings: string[] = [];
  const read = (name: Setting): boolean => {
    const { key, default: fallback } = KEYS[name];
    const raw = values[key];
    if (raw === undefined) return fallback;
    // Exactly as ParseBool: " true" is not a boolean to Istio either.
    if (TRUE.has(raw)) return true;
    if (FALSE.has(raw)) return false;
    warnings.push(`${source}: ${key}=${JSON.stringify(raw)} is not a boolean; Istio's default ${fallback} applies`);
    return fallback;
  };
  const settings = {
    source,
    enabled: read("enabled"),
    repairPods: read("repairPods"),
    deletePods: read("deletePods"),
    labelPods: read("labelPods"),
  };
  return { settings, warnings };
}
