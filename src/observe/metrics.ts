// Every Prometheus metric the controller exports, created on a caller-supplied registry.

import type { Counter, Gauge, Histogram, Registry } from "prom-client";
import {
  FALLBACK_BASES,
  type FallbackBasis,
  ISTIO_REPAIR_MODES,
  type IstioRepairMode,
} from "../detect/istio-repair-settings.js";
import type { EventLoopMonitor } from "./event-loop-monitor.js";
import { type MetricFactory, metricFactory } from "./metric-factory.js";
import { collectDefaultMetrics } from "./prom-client.js";
import { createStandardMetrics, type StandardMetrics } from "./standard-metrics.js";
import { type TalliedEventType, WatchTally } from "./watch-tally.js";

export const REPAIR_TYPES = ["delete", "label", "report"] as const;
export type RepairType = (typeof REPAIR_TYPES)[number];

/** throttled: the API server answered 429 (or 503 with Retry-After); retried after Retry-After, not a failure. */
export const REPAIR_RESULTS = ["success", "fail", "skip", "dry_run", "throttled"] as const;
export type RepairResult = (typeof REPAIR_RESULTS)[number];

/**
 * timeout: the server closed the watch normally; gone: 410 (resourceVersion too old); stalled: no event or bookmark in
 * time; quiet: a watch that went on from a streamed list heard nothing in time, which is the API server's way with a
 * resource that has not changed (reflector.ts), and is resumed as a plain watch.
 */
export const WATCH_RESTART_REASONS = ["timeout", "gone", "error", "stalled", "quiet"] as const;
export type WatchRestartReason = (typeof WATCH_RESTART_REASONS)[number];

export const WATCH_EVENT_TYPES = ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"] as const;
export type WatchEventType = (typeof WATCH_EVENT_TYPES)[number];
// One list of event types for the series and the tallies (watch-tally.ts spells them out itself).
WATCH_EVENT_TYPES satisfies readonly TalliedEventType[];

/**
 * What a watch caches (the `resource` label of the watch metrics): pods (the pods judged), cni-agent-pods and
 * ztunnel-pods (the node agents the gates wait for), nodes (startup taints), namespaces (ambient scope), and any
 * later watch by its collection's name.
 */
export type WatchResource = string;

/** HTTP verb against the API server, e.g. "list", "watch", "delete", "patch", "create". */
export type ApiVerb = string;
/** HTTP status as a string ("200", "409"), or "error" when no response came back. */
export type ApiCode = string;

/**
 * Seconds, 10 ms to 30 min, from first seen broken until repaired: an unheld repair takes milliseconds, but a hold
 * makes it minutes (a CNI agent's --cni-agent-min-ready, the deletion pace, and as Istio's fallback a crash-loop
 * back-off of up to 5 min before the validator's next run shows that Istio's repair did not work).
 */
export const REPAIR_LATENCY_BUCKETS: readonly number[] = [
  0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800,
];

type Labels = Record<string, string>;

/** A counter whose label values are checked at compile time. */
export type LabelledCounter<L extends Labels> = Omit<Counter<keyof L & string>, "inc" | "labels" | "remove"> & {
  inc(labels: L, value?: number): void;
  labels(labels: L): Counter.Internal;
  remove(labels: L): void;
};

/** A gauge whose label values are checked at compile time. */
export type LabelledGauge<L extends Labels> = Omit<
  Gauge<keyof L & string>,
  "inc" | "dec" | "set" | "labels" | "remove" | "setToCurrentTime" | "startTimer"
> & {
  inc(labels: L, value?: number): void;
  dec(labels: L, value?: number): void;
  set(labels: L, value: number): void;
  labels(labels: L): Gauge.Internal<keyof L & string>;
  remove(labels: L): void;
};

/** A gauge whose series are read at scrape time from whoever registers a reader (none: no series). */
export type ScrapedSeries<L extends Labels> = {
  readFrom(read: () => Iterable<readonly [L, number]>): void;
};

export type Metrics = {
  /** cni_repair_pods_repaired_total */
  readonly podsRepaired: LabelledCounter<{ type: RepairType; result: RepairResult }>;
  /** cni_repair_broken_pods: broken pods in the cache right now. */
  readonly brokenPods: LabelledGauge<{ rule: string }>;
  /** cni_repair_detections_total */
  readonly detections: LabelledCounter<{ rule: string }>;
  /** cni_repair_repair_latency_seconds: first seen broken until the action completed. */
  readonly repairLatencySeconds: Histogram<never>;
  /** cni_repair_retries_exhausted_total */
  readonly retriesExhausted: Counter<never>;
  /** cni_repair_watch_restarts_total */
  readonly watchRestarts: LabelledCounter<{ resource: WatchResource; reason: WatchRestartReason }>;
  /** cni_repair_listener_failures_total: a subscriber of a watch's changes threw (a bug); the others still heard it. */
  readonly listenerFailures: LabelledCounter<{ resource: WatchResource }>;
  /**
   * cni_repair_watch_undecodable_objects_total: objects a list or watch could not read as protobuf (each read again
   * as JSON; never dropped).
   */
  readonly watchUndecodableObjects: LabelledCounter<{ resource: WatchResource }>;
  /** cni_repair_watch_events_total */
  readonly watchEvents: LabelledCounter<{ resource: WatchResource; type: WatchEventType }>;
  /** cni_repair_cache_pods */
  readonly cachePods: Gauge<never>;
  /** cni_repair_last_sync_timestamp_seconds: each watch's last completed list or watch event. */
  readonly lastSyncTimestampSeconds: LabelledGauge<{ resource: WatchResource }>;
  /** The tally a watch counts its events and syncs in (one per resource), moved into the two series above when scraped. */
  watchTally(resource: WatchResource): WatchTally;
  /** cni_repair_api_requests_total */
  readonly apiRequests: LabelledCounter<{ verb: ApiVerb; code: ApiCode }>;
  /** cni_repair_events_failed_total: Kubernetes Events we could not write (never fails a repair). */
  readonly eventsFailed: Counter<never>;
  /**
   * cni_repair_pods_held: broken pods a guard holds back right now, by reason. The reasons are the safety's words
   * (safety/hold-reasons.ts); safety/holds.ts creates their series.
   */
  readonly podsHeld: LabelledGauge<{ reason: string }>;
  /** cni_repair_holds_total: times a pod entered a hold, by reason (series created as podsHeld's). */
  readonly holdsTotal: LabelledCounter<{ reason: string }>;
  /**
   * cni_repair_pods_held_longest_seconds: of the pods held now, how long the longest-held one has been held for its
   * reason. Read at scrape time from the reader the holds register (safety/holds.ts), so it grows while a pod waits.
   */
  readonly podsHeldLongestSeconds: ScrapedSeries<{ reason: string }>;
  /** cni_repair_storm_breaker_open: breakers open now, by scope (node: how many nodes; cluster: 0/1). */
  readonly stormBreakerOpen: LabelledGauge<{ scope: "node" | "cluster" }>;
  /** cni_repair_cni_agent_pods: CNI agent pods seen, by rule and readiness. */
  readonly cniAgentPods: LabelledGauge<{ rule: string; ready: "true" | "false" }>;
  /** cni_repair_istio_repair_mode: what Istio's own repair does, as read from its settings (1 for the mode in force). */
  readonly istioRepairMode: LabelledGauge<{ mode: IstioRepairMode }>;
  /** cni_repair_mesh_fallback_deletions_total: pods deleted because Istio's in-place repair evidently failed. */
  readonly meshFallbackDeletions: LabelledCounter<{ basis: FallbackBasis }>;
  /** cni_repair_leader: 1 while this replica holds the Lease (or runs without election). */
  readonly leader: Gauge<never>;
  /** cni_repair_build_info, always 1. */
  readonly buildInfo: LabelledGauge<{ version: string; revision: string; node_version: string }>;
  /** controller-runtime's reconcile metrics and client-go's workqueue family (standard-metrics.ts). */
  readonly controllerRuntime: StandardMetrics;
};

export type MetricsOptions = {
  /** Rule names known at start-up, so their series exist (at zero) before the first detection. */
  readonly ruleNames: readonly string[];
  readonly version: string;
  /** The commit built from ("unknown" when the build did not record it). */
  readonly revision?: string;
  /** What each rule does with a broken pod (cni_repair_rule_info): the alerts tell delete from label and report by it. */
  readonly ruleActions?: Readonly<Record<string, RepairType>>;
  /** The `controller` and work queue `name` label of the standard metrics; default "cni-repair". */
  readonly controllerName?: string;
  /** The /healthz heartbeat, whose delays are the nodejs_eventloop_lag_* series (none without it: one-shot commands). */
  readonly eventLoop?: EventLoopMonitor;
};

/** Registers every metric, plus prom-client's process metrics, on `registry` only. */
export function createMetrics(registry: Registry, opts: MetricsOptions): Metrics {
  const { counter, gauge, histogram } = metricFactory(registry);
  const podsRepaired = counter(
    "cni_repair_pods_repaired_total",
    "Repair actions taken on broken pods, by action type and result.",
    ["type", "result"],
  );
  const brokenPods = gauge("cni_repair_broken_pods", "Pods currently detected as broken, by rule.", ["rule"]);
  const detections = counter("cni_repair_detections_total", "Times a pod was newly detected as broken, by rule.", [
    "rule",
  ]);
  const repairLatencySeconds = histogram(
    "cni_repair_repair_latency_seconds",
    "Time from first seeing a pod broken until its repair action completed.",
    REPAIR_LATENCY_BUCKETS,
  );
  const retriesExhausted = counter(
    "cni_repair_retries_exhausted_total",
    "Work items dropped after using up their retries.",
  );
  const watchRestarts = counter("cni_repair_watch_restarts_total", "Watch restarts, by watched resource and reason.", [
    "resource",
    "reason",
  ]);
  const listenerFailures = counter(
    "cni_repair_listener_failures_total",
    "Changes of a watched resource on which one of its listeners threw (a bug); the other listeners still heard them.",
    ["resource"],
  );
  const watchUndecodableObjects = counter(
    "cni_repair_watch_undecodable_objects_total",
    "Objects a list or watch could not read as protobuf, by watched resource; each is read again as JSON.",
    ["resource"],
  );
  // Both series are read from the watches' tallies at scrape time (whichever is collected first moves them).
  const tallies = new Map<WatchResource, WatchTally>();
  const moveTallies = () => {
    for (const tally of tallies.values()) tally.moveInto({ watchEvents, lastSyncTimestampSeconds });
  };
  const watchEvents = counter(
    "cni_repair_watch_events_total",
    "Watch events received, by watched resource and type.",
    ["resource", "type"],
    moveTallies,
  );
  const cachePods = gauge("cni_repair_cache_pods", "Pods held in the informer cache.");
  const lastSyncTimestampSeconds = gauge(
    "cni_repair_last_sync_timestamp_seconds",
    "Unix time of the last completed list or received watch event, by watched resource.",
    ["resource"],
    moveTallies,
  );
  const apiRequests = counter(
    "cni_repair_api_requests_total",
    "Kubernetes API requests, by verb and HTTP status code (error: no response).",
    ["verb", "code"],
  );
  const eventsFailed = counter("cni_repair_events_failed_total", "Kubernetes Events that could not be written.");
  const podsHeld = gauge("cni_repair_pods_held", "Broken pods a safety guard holds back right now, by reason.", [
    "reason",
  ]);
  const holdsTotal = counter("cni_repair_holds_total", "Times a broken pod entered a hold, by reason.", ["reason"]);
  let readHeldLongest: () => Iterable<readonly [{ reason: string }, number]> = () => [];
  gauge(
    "cni_repair_pods_held_longest_seconds",
    "Of the broken pods held now, how long the longest-held one has been held for its reason (0: none), by reason.",
    ["reason"],
    function collect() {
      for (const [labels, seconds] of readHeldLongest()) this.set(labels, seconds);
    },
  );
  const podsHeldLongestSeconds: ScrapedSeries<{ reason: string }> = {
    readFrom: (read) => {
      readHeldLongest = read;
    },
  };
  const stormBreakerOpen = gauge(
    "cni_repair_storm_breaker_open",
    "Storm breakers open now: nodes (scope=node), or 1 when the cluster-wide one is open (scope=cluster).",
    ["scope"],
  );
  const cniAgentPods = gauge(
    "cni_repair_cni_agent_pods",
    "CNI agent pods seen by the readiness gate, by rule and whether they are Ready.",
    ["rule", "ready"],
  );
  const istioRepairMode = gauge(
    "cni_repair_istio_repair_mode",
    "What Istio's own repair does with broken pods, as read from its istio-cni-config (1 for the mode in force; all 0 with --istio-repair=ignore or without the istio preset).",
    ["mode"],
  );
  const meshFallbackDeletions = counter(
    "cni_repair_mesh_fallback_deletions_total",
    "Pods deleted as Istio's fallback: its in-place repair evidently did not fix them, by the evidence.",
    ["basis"],
  );
  const leader = gauge(
    "cni_repair_leader",
    "1 while this replica is the active one (holds the Lease, or runs without election).",
  );
  const buildInfo = gauge("cni_repair_build_info", "Build information; always 1.", [
    "version",
    "revision",
    "node_version",
  ]);
  const ruleInfo = gauge(
    "cni_repair_rule_info",
    "The rules in use and the action each takes on a broken pod (delete, label or report); always 1.",
    ["rule", "action"],
  );

  // Series that exist from the start let alerts and rate() see them before the first increment.
  for (const type of REPAIR_TYPES) {
    for (const result of REPAIR_RESULTS) podsRepaired.inc({ type, result }, 0);
  }
  for (const rule of opts.ruleNames) {
    brokenPods.set({ rule }, 0);
    detections.inc({ rule }, 0);
  }
  buildInfo.set({ version: opts.version, revision: opts.revision ?? "unknown", node_version: process.version }, 1);
  for (const [rule, action] of Object.entries(opts.ruleActions ?? {})) ruleInfo.set({ rule, action }, 1);
  for (const scope of ["node", "cluster"] as const) stormBreakerOpen.set({ scope }, 0);
  for (const rule of opts.ruleNames) {
    for (const ready of ["true", "false"] as const) cniAgentPods.set({ rule, ready }, 0);
  }
  for (const mode of ISTIO_REPAIR_MODES) istioRepairMode.set({ mode }, 0);
  for (const basis of FALLBACK_BASES) meshFallbackDeletions.inc({ basis }, 0);
  leader.set(0);

  // Every wake-up of an idle process costs CPU (most with the DaemonSet's interpreter-only Node flags), so the
  // event-loop lag series come from the /healthz heartbeat's delays (every 10 s: cli/run-controller.ts; observe/event-loop-monitor.ts)
  // instead of a sampler of prom-client's own, which would be a second timer. Its resolution is set past any
  // process's lifetime, so that timer never fires, and its series make way for ours under the same names.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: NEVER_MS });
  // Gauges named like counters fail `promtool check metrics`; nodejs_active_{handles,requests,resources} (by type)
  // carry the same counts.
  for (const name of [
    "nodejs_active_handles_total",
    "nodejs_active_requests_total",
    "nodejs_active_resources_total",
    ...Object.values(EVENT_LOOP_LAG),
  ]) {
    registry.removeSingleMetric(name);
  }
  if (opts.eventLoop) eventLoopLagGauges(gauge, opts.eventLoop);

  const metrics: Metrics = {
    podsRepaired,
    brokenPods,
    detections,
    repairLatencySeconds,
    retriesExhausted,
    watchRestarts,
    listenerFailures,
    watchUndecodableObjects,
    watchEvents,
    cachePods,
    lastSyncTimestampSeconds,
    watchTally: (resource) => {
      const tally = tallies.get(resource) ?? new WatchTally(resource);
      tallies.set(resource, tally);
      return tally;
    },
    apiRequests,
    eventsFailed,
    podsHeld,
    holdsTotal,
    podsHeldLongestSeconds,
    stormBreakerOpen,
    cniAgentPods,
    istioRepairMode,
    meshFallbackDeletions,
    leader,
    buildInfo,
    controllerRuntime: createStandardMetrics(registry, opts.controllerName ?? "cni-repair"),
  };
  // The pods are always watched: their series come first (and exist before the watch starts).
  initWatchSeries(metrics, "pods");
  return metrics;
}

/** The longest timer Node takes (about 24.8 days): prom-client's event-loop sampler, which this replaces. */
const NEVER_MS = 2 ** 31 - 1;

/** The nodejs_eventloop_lag_* series (prom-client's names), by the statistic each shows. */
const EVENT_LOOP_LAG = {
  last: "nodejs_eventloop_lag_seconds",
  min: "nodejs_eventloop_lag_min_seconds",
  max: "nodejs_eventloop_lag_max_seconds",
  mean: "nodejs_eventloop_lag_mean_seconds",
  stddev: "nodejs_eventloop_lag_stddev_seconds",
  p50: "nodejs_eventloop_lag_p50_seconds",
  p90: "nodejs_eventloop_lag_p90_seconds",
  p99: "nodejs_eventloop_lag_p99_seconds",
} as const;

/** The lag gauges, read at scrape time from the heartbeats since the previous scrape. */
function eventLoopLagGauges(gauge: MetricFactory["gauge"], monitor: EventLoopMonitor): void {
  const { last, ...statistics } = EVENT_LOOP_LAG;
  // Registered first: the registry reads its series in that order, and this one's collect sets all of them.
  gauge(last, "Lag of event loop in seconds: the last heartbeat's delay.", [], function collect() {
    this.set(monitor.lagMs() / 1000);
    const taken = monitor.takeLagStatistics();
    for (const [statistic, series] of byStatistic) series.set(taken[statistic]);
  });
  const byStatistic = Object.entries(statistics).map(([statistic, name]) => {
    const series = gauge(name, `The ${statistic} of the heartbeats' delays since the last scrape, in seconds.`);
    return [statistic as keyof typeof statistics, series] as const;
  });
}

/** A watch's series at zero (the last sync at 0 until its first list), so alerts see them from the start. */
export function initWatchSeries(metrics: Metrics, resource: WatchResource): void {
  for (const reason of WATCH_RESTART_REASONS) metrics.watchRestarts.inc({ resource, reason }, 0);
  for (const type of WATCH_EVENT_TYPES) metrics.watchEvents.inc({ resource, type }, 0);
  metrics.listenerFailures.inc({ resource }, 0);
  metrics.watchUndecodableObjects.inc({ resource }, 0);
  // inc by 0: creates the series at 0, and leaves one that has synced already as it is.
  metrics.lastSyncTimestampSeconds.inc({ resource }, 0);
}
