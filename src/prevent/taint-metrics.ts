// The startup-taint metrics, on the registry main creates. Kept beside the feature (created only when it is on)
// rather than in observe/metrics.ts, so a controller without it exports none of them.
import type { Counter, Histogram, Registry } from "prom-client";
import type { NodeCache } from "../informer/node-cache.js";
import { metricFactory } from "../observe/metric-factory.js";
import type { AgentReadiness } from "../safety/agent-readiness.js";
import { type Clock, instantOf } from "../util/clock.js";
import type { TaintJudge } from "./taint-judge.js";
import { TAINT_HOLD_REASONS, type TaintHoldReason } from "./taint-policy.js";

export const TAINT_ACTIONS = ["remove", "add"] as const;
/** report: --mode=report, counted and not done. */
export const TAINT_RESULTS = ["success", "fail", "report"] as const;

/** Seconds from node creation (or agent Ready) to the taint's removal: a node boot takes seconds to minutes. */
const REMOVAL_BUCKETS = [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800];

/** What the gauges read at scrape time. */
export type TaintGaugeSource = {
  taintedNodes(key: string): number;
  heldNodes(reason: TaintHoldReason): number;
  /** Longest a node now tainted has carried it; and has had its agents Ready while tainted (seconds, 0: none). */
  longestSeconds(since: "taint" | "agent_ready"): number;
};

/** The gauges' read-only view of the node cache, the judge's holds and the agents' readiness. */
export function taintGaugeSource(
  nodes: Pick<NodeCache, "store" | "taintedSince">,
  judge: Pick<TaintJudge, "heldFor">,
  readiness: Pick<AgentReadiness, "cniAgentsOn">,
  clock: Clock,
): TaintGaugeSource {
  return {
    taintedNodes(key) {
      let count = 0;
      for (const facts of nodes.store.values()) if (facts.taints?.some((taint) => taint.key === key)) count++;
      return count;
    },
    heldNodes: (reason) => judge.heldFor(reason).length,
    longestSeconds(since) {
      const now = instantOf(clock);
      let longestMs = 0;
      for (const [node, taintedAt] of nodes.taintedSince()) {
        if (since === "taint") {
          longestMs = Math.max(longestMs, now.wallMs - taintedAt);
          continue;
        }
        const presence = readiness.cniAgentsOn(node, "observed", now);
        if (presence.kind === "ready")
          longestMs = Math.max(longestMs, Math.min(presence.forMs, now.wallMs - taintedAt));
      }
      return longestMs / 1000;
    },
  };
}

export type TaintMetrics = {
  readonly changes: Counter<"key" | "action" | "result">;
  readonly removalSeconds: Histogram<"since">;
};

export function createTaintMetrics(
  registry: Registry,
  keys: readonly string[],
  source: TaintGaugeSource,
): TaintMetrics {
  const { counter, gauge, histogram } = metricFactory(registry);
  /** A gauge with one label whose every value is read from the caches at scrape time (never stale, nothing to update). */
  const scrapedGauge = <const L extends string, V extends string>(
    name: string,
    help: string,
    label: L,
    values: readonly V[],
    read: (value: V) => number,
  ) =>
    gauge(name, help, [label], function collect() {
      for (const value of values) this.set({ [label]: value } as Record<L, V>, read(value));
    });
  scrapedGauge(
    "cni_repair_startup_taint_nodes",
    "Nodes carrying a managed startup taint now, by key.",
    "key",
    keys,
    (key) => source.taintedNodes(key),
  );
  scrapedGauge(
    "cni_repair_startup_taint_held_nodes",
    "Nodes whose startup taint is kept (or, in continuous mode, not re-added) now, by reason.",
    "reason",
    TAINT_HOLD_REASONS,
    (reason) => source.heldNodes(reason),
  );
  scrapedGauge(
    "cni_repair_startup_taint_longest_seconds",
    "Of the nodes carrying a managed startup taint now: the longest one has carried it (since=taint), and the longest one's CNI agents have been Ready meanwhile (since=agent_ready).",
    "since",
    ["taint", "agent_ready"] as const,
    (since) => source.longestSeconds(since),
  );
  const changes = counter(
    "cni_repair_startup_taint_changes_total",
    "Startup taints removed or added (report: would have been), by key.",
    ["key", "action", "result"],
  );
  const removalSeconds = histogram(
    "cni_repair_startup_taint_removal_seconds",
    "Seconds from the node's creation (since=node_created), and from its CNI agents turning Ready as observed (since=agent_ready), to the startup taint's removal.",
    REMOVAL_BUCKETS,
    ["since"],
  );
  for (const key of keys) {
    for (const action of TAINT_ACTIONS) for (const result of TAINT_RESULTS) changes.inc({ key, action, result }, 0);
  }
  for (const since of ["node_created", "agent_ready"]) removalSeconds.zero({ since });
  return { changes, removalSeconds };
}
