// Assembles startup-taint management from the config and the agent caches the readiness gate already keeps, in two
// parts: what every command reads (the node cache, the writes not seen yet, the judge: scan and explain show its
// views) and what only run and scan build (the reconciler, its controller on its own queue with one worker, the
// triggers feeding it, the metrics).
import type { Registry } from "prom-client";
import type { EventRecorder } from "../act/event-recorder.js";
import type { Config } from "../config/config.js";
import { Controller, type Leadership } from "../controller/controller.js";
import type { Source } from "../controller/watches.js";
import type { AgentFacts } from "../informer/cni-agent-pods.js";
import type { StoreChange } from "../informer/facts-store.js";
import { NodeCache } from "../informer/node-cache.js";
import type { ReflectorObserver } from "../informer/reflector.js";
import type { ReflectorSettings } from "../informer/reflector-settings.js";
import type { KubeTransport } from "../kube/transport.js";
import type { Logger } from "../observe/logger.js";
import type { StandardMetrics } from "../observe/standard-metrics.js";
import { WorkQueue } from "../queue/work-queue.js";
import type { AgentReadiness } from "../safety/agent-readiness.js";
import type { Clock } from "../util/clock.js";
import { StartupTaints } from "./startup-taints.js";
import { TaintExpectations } from "./taint-expectations.js";
import { TaintJudge } from "./taint-judge.js";
import { createTaintMetrics, taintGaugeSource } from "./taint-metrics.js";
import { taintTriggers } from "./taint-triggers.js";

/** The controller's name: the `controller` label of its reconcile metrics and `name` of its work queue. */
export const STARTUP_TAINT_CONTROLLER = "startup-taints";

/** What every command reads: the node cache and the judgement over it. */
export type StartupTaintCaches = {
  readonly nodes: NodeCache;
  readonly expectations: TaintExpectations;
  readonly judge: TaintJudge;
  /** Where a node's CNI agents stand (not ztunnel's): every one must be Ready on a node before its taint goes. */
  readonly readiness: AgentReadiness;
};

export function buildStartupTaintCaches(
  config: Config,
  deps: {
    readonly settings: ReflectorSettings;
    readonly readiness: AgentReadiness;
    /** The node watch's metrics and logs, as every other watch has. */
    readonly observer: ReflectorObserver;
    readonly clock: Clock;
  },
): StartupTaintCaches | undefined {
  const settings = config.startupTaint;
  if (!settings) return undefined;
  const { clock, readiness } = deps;
  const nodes = new NodeCache({
    config,
    settings: deps.settings,
    keys: settings.keys,
    observer: deps.observer,
    clock,
  });
  const expectations = new TaintExpectations(nodes.store, clock);
  const policy = { ...settings, minReadyMs: config.cniAgentGate?.minReadyMs ?? 0 };
  const judge = new TaintJudge({ policy, nodes, readiness, expectations, clock });
  return { nodes, expectations, judge, readiness };
}

export function buildStartupTaintController(
  config: Config,
  caches: StartupTaintCaches,
  deps: {
    readonly transport: KubeTransport;
    /** The CNI agent caches' changes (the agents `caches.readiness` asks about). */
    readonly agentChanges: readonly Source<StoreChange<AgentFacts>>[];
    readonly logger: Logger;
    readonly registry?: Registry | undefined;
    /** The workqueue and controller-runtime families the controller's series go into. */
    readonly standard: StandardMetrics;
    readonly leadership?: Leadership | undefined;
    /** Decide and show, never write (scan). */
    readonly readOnly?: boolean;
    /** The Node Events go through the controller's recorder (counted when they fail, drained at shutdown). */
    readonly events: Pick<EventRecorder, "postAbout">;
    readonly clock: Clock;
  },
): Controller {
  const { nodes, expectations, judge, readiness } = caches;
  const keys = config.startupTaint?.keys ?? [];
  const { leadership } = deps;
  const metrics = deps.registry
    ? createTaintMetrics(deps.registry, keys, taintGaugeSource(nodes, judge, readiness, deps.clock))
    : undefined;
  const reconciler = new StartupTaints({
    judge,
    expectations,
    report: config.mode === "report" || deps.readOnly === true,
    transport: deps.transport,
    mayWrite: () => leadership?.isLeader ?? true,
    logger: deps.logger,
    events: deps.events,
    metrics,
  });
  const queue = new WorkQueue({
    clock: deps.clock,
    backoff: { baseMs: 1_000, maxMs: 60_000, jitter: 0.5 },
    observer: deps.standard.queue(STARTUP_TAINT_CONTROLLER),
  });
  // One worker: the share cap is judged on a count no other write is changing. A failed write is retried with
  // backoff for as long as it fails (a node's taint has no "next resync" to fall back on).
  const controller = new Controller({
    queue,
    reconciler,
    workers: 1,
    maxRetries: Number.POSITIVE_INFINITY,
    leadership,
    metrics: deps.standard.controller(STARTUP_TAINT_CONTROLLER, 1),
    logger: deps.logger,
  });
  const triggers = taintTriggers({ nodes, agents: deps.agentChanges }, { keys, judge, nodes: nodes.store });
  for (const trigger of triggers) trigger.connect((request) => controller.enqueue(request));
  return controller;
}
