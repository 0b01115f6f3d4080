// The pod controller: the reconciler (detect, judge through the safety object, act), its work queue, the workers that run
// it, and the triggers that put pod keys on that queue. A new term of leadership paces from empty (the previous
// leader may have spent the burst a moment ago: see README) and looks at every known broken pod again.
import type { EventRecorder } from "../act/event-recorder.js";
import type { Repairer } from "../act/repairer.js";
import type { Config } from "../config/config.js";
import type { DetectContext } from "../detect/detect.js";
import type { PodCache } from "../informer/pod-cache.js";
import type { Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";
import { WorkQueue } from "../queue/work-queue.js";
import type { Safety } from "../safety/safety.js";
import { Publisher } from "../util/publisher.js";
import type { BrokenPods } from "./broken-pods.js";
import { Controller, type Leadership } from "./controller.js";
import { Reconciler, type ReconcilerDeps } from "./reconciler.js";
import { podTriggers, type TriggerSources } from "./triggers.js";
import type { Trigger } from "./watches.js";

export type PodControllerDeps = {
  readonly cache: PodCache;
  readonly repairer: Repairer;
  readonly events: EventRecorder;
  readonly safety: Safety;
  readonly broken: BrokenPods;
  /** The clock and namespace labels detection needs now. */
  readonly context: () => DetectContext;
  /** What else wakes pods: agents, namespaces, the guards' events, Istio's settings (the pod cache is the first). */
  readonly sources: Omit<TriggerSources, "pods" | "resync">;
  readonly leadership?: Leadership | undefined;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly onOutcome?: ReconcilerDeps["onOutcome"] | undefined;
};

export type PodController = {
  readonly controller: Controller;
  readonly queue: WorkQueue;
  /** Publish to look at every known broken pod again (the --resync-period tick; a new term does it too). */
  readonly resync: Publisher<void>;
  readonly triggers: readonly Trigger[];
};

export function buildPodController(config: Config, deps: PodControllerDeps): PodController {
  const { cache, safety, broken, metrics, logger } = deps;
  const reconciler = new Reconciler({
    store: cache.store,
    rules: config.rules,
    label: config.label,
    repairer: deps.repairer,
    events: deps.events,
    broken,
    safety,
    context: deps.context,
    metrics,
    logger: logger.child({ component: "reconciler" }),
    ...(deps.onOutcome && { onOutcome: deps.onOutcome }),
  });
  const standard = metrics.controllerRuntime;
  const queue = new WorkQueue({
    backoff: { baseMs: config.retryBaseDelayMs, maxMs: config.retryMaxDelayMs, jitter: 0.5 },
    observer: standard.queue(standard.name),
  });
  const resync = new Publisher<void>();
  const controller = new Controller({
    queue,
    reconciler,
    workers: config.workers,
    maxRetries: config.maxRetries,
    leadership: deps.leadership,
    onLeading: () => {
      safety.startTerm();
      resync.publish();
    },
    metrics: standard.controller(standard.name, config.workers),
    retriesExhausted: metrics.retriesExhausted,
    logger: logger.child({ component: "controller" }),
  });
  const triggers = podTriggers(
    { ...deps.sources, pods: cache, resync },
    { podStore: cache.store, broken, holds: safety.holds },
  );
  for (const trigger of triggers) trigger.connect((request) => controller.enqueue(request));
  return { controller, queue, resync, triggers };
}
