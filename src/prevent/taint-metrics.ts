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
  new Gauge({
    name: "cni_repair_startup_taint_nodes",
    help: "Nodes carrying a managed startup taint now, by key.",
    labelNames: ["key"] as const,
    registers,
    collect() {
      for (const key of keys) this.set({ key }, source.taintedNodes(key));
    },
  });
  new Gauge({
    name: "cni_repair_startup_taint_held_nodes",
    help: "Nodes whose startup taint is kept (or, in continuous mode, not re-added) now, by reason.",
    labelNames: ["reason"] as const,
    registers,
    collect() {
      for (const reason of HOLD_REASONS) this.set({ reason }, source.heldNodes(reason));
    },
  });
  new Gauge({
    name: "cni_repair_startup_taint_longest_seconds",
    help: "Of the nodes carrying a managed startup taint now: the longest one has carried it (since=taint), and the longest one's CNI agents have been Ready meanwhile (since=agent_ready).",
    labelNames: ["since"] as const,
    registers,
    collect() {
      for (const since of ["taint", "agent_ready"] as const) this.set({ since }, source.longestSeconds(since));
    },
  });
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
