// Assembles startup-taint management from the config and the agent caches the readiness gate already keeps:
// the node watch, the reconciler, its controller (one worker on its own queue) and its metrics.
import type { Registry } from "prom-client";
import type { EventRecorder } from "../act/event-recorder.js";
import type { Config } from "../config/config.js";
import { Controller, type Leadership } from "../controller/controller.js";
import type { CniAgents } from "../informer/cni-agent-pods.js";
import type { ReflectorObserver, RunningCache } from "../informer/reflector.js";
import type { KubeTransport } from "../kube/transport.js";
import type { Logger } from "../observe/logger.js";
import type { StandardMetrics } from "../observe/standard-metrics.js";
import { WorkQueue } from "../queue/work-queue.js";
import type { Clock } from "../util/clock.js";
import { nodeReflector } from "./node-reflector.js";
import { StartupTaints } from "./startup-taints.js";
import { createTaintMetrics } from "./taint-metrics.js";

/** The controller's name: the `controller` label of its reconcile metrics and `name` of its work queue. */
export const STARTUP_TAINT_CONTROLLER = "startup-taints";

export type StartupTaintParts = {
  readonly taints: StartupTaints;
  readonly reflector: RunningCache;
  readonly controller: Controller;
};

export function buildStartupTaints(
  config: Config,
  deps: {
    readonly transport: KubeTransport;
    /** The CNI agent caches (not ztunnel's): every one must be Ready on a node before its taint goes. */
    readonly agents: readonly CniAgents[];
    readonly logger: Logger;
    readonly registry?: Registry | undefined;
    /** The workqueue and controller-runtime families the controller's series go into. */
    readonly standard: StandardMetrics;
    readonly leadership?: Leadership | undefined;
    /** Decide and show, never write (scan). */
    readonly readOnly?: boolean;
    /** The Node Events go through the controller's recorder (counted when they fail, drained at shutdown). */
    readonly events: Pick<EventRecorder, "postAbout">;
    /** The node watch's metrics and logs, as every other watch has. */
    readonly observer: ReflectorObserver;
    readonly clock?: Clock | undefined;
  },
): StartupTaintParts | undefined {
  const settings = config.startupTaint;
  if (!settings) return undefined;
  const queue = new WorkQueue({
    clock: deps.clock,
    backoff: { baseMs: 1_000, maxMs: 60_000, jitter: 0.5 },
    observer: deps.standard.queue(STARTUP_TAINT_CONTROLLER),
  });
  const taints = new StartupTaints({
    policy: { ...settings, minReadyMs: config.cniAgentGate?.minReadyMs ?? 0 },
    report: config.mode === "report" || deps.readOnly === true,
    agents: deps.agents,
    transport: deps.transport,
    logger: deps.logger,
    queue,
    events: deps.events,
    clock: deps.clock,
  });
  // One worker: the share cap is judged on a count no other write is changing. A failed write is retried with
  // backoff for as long as it fails (a node's taint has no "next resync" to fall back on).
  const controller = new Controller({
    queue,
    reconciler: taints,
    workers: 1,
    maxRetries: Number.POSITIVE_INFINITY,
    leadership: deps.leadership,
    metrics: deps.standard.controller(STARTUP_TAINT_CONTROLLER, 1),
    logger: deps.logger,
  });
  const reflector = nodeReflector(config, deps.transport, taints.nodes, deps.observer);
  reflector.subscribe((change) => taints.onNodeChange(change));
  if (deps.registry) taints.metrics = createTaintMetrics(deps.registry, settings.keys, taints);
  return { taints, reflector, controller };
}
