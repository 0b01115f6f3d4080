// The startup-taint metrics, on the registry main creates. Kept beside the feature (created only when it is on)
// rather than in observe/metrics.ts, so a controller without it exports none of them.
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { HoldReason } from "./taint-policy.js";

export const TAINT_ACTIONS = ["remove", "add"] as const;
/** report: --mode=report, counted and not done. */
export const TAINT_RESULTS = ["success", "fail", "report"] as const;
export const HOLD_REASONS: readonly HoldReason[] = ["agent_not_ready", "agent_min_ready", "no_agent_pod", "share_cap"];

/** Seconds from node creation (or agent Ready) to the taint's removal: a node boot takes seconds to minutes. */
const REMOVAL_BUCKETS = [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800];

/** What the gauges read at scrape time. */
export type TaintGaugeSource = {
  taintedNodes(key: string): number;
  heldNodes(reason: HoldReason): number;
  /** Longest a node now tainted has carried it; and has had its agents Ready while tainted (seconds, 0: none). */
  longestSeconds(since: "taint" | "agent_ready"): number;
};

export type TaintMetrics = {
  readonly changes: Counter<"key" | "action" | "result">;
  readonly removalSeconds: Histogram<"since">;
};

export function createTaintMetrics(
  registry: Registry,
  keys: readonly string[],
  source: TaintGaugeSource,
): TaintMetrics {
  const registers = [registry];
  scrapedGauge(registry, "cni_repair_startup_taint_nodes", "Nodes carrying a managed startup taint now, by key.", {
    label: "key",
    values: keys,
    read: (key) => source.taintedNodes(key),
  });
  scrapedGauge(
    registry,
    "cni_repair_startup_taint_held_nodes",
    "Nodes whose startup taint is kept (or, in continuous mode, not re-added) now, by reason.",
    { label: "reason", values: HOLD_REASONS, read: (reason) => source.heldNodes(reason) },
  );
  scrapedGauge(
    registry,
    "cni_repair_startup_taint_longest_seconds",
    "Of the nodes carrying a managed startup taint now: the longest one has carried it (since=taint), and the longest one's CNI agents have been Ready meanwhile (since=agent_ready).",
    { label: "since", values: ["taint", "agent_ready"] as const, read: (since) => source.longestSeconds(since) },
  );
  const changes = new Counter({
    name: "cni_repair_startup_taint_changes_total",
    help: "Startup taints removed or added (report: would have been), by key.",
    labelNames: ["key", "action", "result"] as const,
    registers,
  });
  const removalSeconds = new Histogram({
    name: "cni_repair_startup_taint_removal_seconds",
    help: "Seconds from the node's creation (since=node_created), and from its CNI agents turning Ready as observed (since=agent_ready), to the startup taint's removal.",
    labelNames: ["since"] as const,
    buckets: REMOVAL_BUCKETS,
    registers,
  });
  for (const key of keys) {
    for (const action of TAINT_ACTIONS) for (const result of TAINT_RESULTS) changes.inc({ key, action, result }, 0);
  }
  for (const since of ["node_created", "agent_ready"]) removalSeconds.zero({ since });
  return { changes, removalSeconds };
}

/** A gauge with one label whose every value is read from the caches at scrape time (never stale, nothing to update). */
function scrapedGauge<V extends string>(
  registry: Registry,
  name: string,
  help: string,
  series: { readonly label: string; readonly values: readonly V[]; readonly read: (value: V) => number },
): void {
  new Gauge({
    name,
    help,
    labelNames: [series.label],
    registers: [registry],
    collect() {
      for (const value of series.values) this.set({ [series.label]: value }, series.read(value));
    },
  });
}
