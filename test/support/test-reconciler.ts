// The pod reconciler as compose wires it, for tests: a store, the safety object, a repairer and an Event recorder
// over the transport given, metrics on a fresh registry. Every guard is off unless a test turns it on.
import { Registry } from "prom-client";
import { EventRecorder } from "../../src/act/event-recorder.js";
import { Repairer } from "../../src/act/repairer.js";
import type { Mode } from "../../src/config/config.js";
import { BrokenPods } from "../../src/controller/broken-pods.js";
import { Reconciler } from "../../src/controller/reconciler.js";
import { type DetectContext, NO_CONTEXT } from "../../src/detect/detect.js";
import { presetRule } from "../../src/detect/presets.js";
import type { Rule } from "../../src/detect/rule.js";
import { PodStore } from "../../src/informer/pod-store.js";
import type { KubeTransport } from "../../src/kube/transport.js";
import type { Logger } from "../../src/observe/logger.js";
import { createMetrics, type Metrics } from "../../src/observe/metrics.js";
import { AgentReadiness } from "../../src/safety/agent-readiness.js";
import type { GuardOptions } from "../../src/safety/guards.js";
import { Safety } from "../../src/safety/safety.js";
import { silentLogger } from "./loggers.js";

/** Guards that never object: no pace, no in-flight cap, a breaker that needs 1,000 broken pods, no agent gate. */
export function guardsOff(overrides: Partial<GuardOptions> = {}): GuardOptions {
  return {
    limits: {
      deletionsPerMinute: 0,
      outageDeletionsPerMinute: 0,
      deletionBurst: 1,
      inflightPerNode: 0,
      inflightPerNamespace: 0,
    },
    loopBackoff: { baseMs: 60_000, maxMs: 60_000 },
    storm: { maxBrokenFraction: 1, minBroken: 1_000 },
    readiness: new AgentReadiness({ gatesByRule: new Map() }),
    ...overrides,
  };
}

export const TEST_LABEL = { key: "cni.istio.io/uninitialized", value: "true" } as const;

export type TestReconcilerOptions = {
  readonly transport: KubeTransport;
  readonly mode?: Mode;
  readonly rules?: readonly Rule[];
  readonly guards?: Partial<GuardOptions>;
  readonly context?: () => DetectContext;
  readonly metrics?: Metrics;
  readonly logger?: Logger;
};

export function testReconciler(options: TestReconcilerOptions) {
  const registry = new Registry();
  const metrics = options.metrics ?? createMetrics(registry, { ruleNames: ["istio"], version: "test" });
  const logger = options.logger ?? silentLogger();
  const rules = options.rules ?? [presetRule("istio") as Rule];
  const context = options.context ?? (() => NO_CONTEXT);
  const events = new EventRecorder(options.transport, logger, () => {});
  const store = new PodStore();
  const safety = new Safety({
    ...guardsOff(options.guards),
    rules,
    mode: options.mode ?? "delete",
    label: TEST_LABEL,
    deleteBarePods: false,
    metrics,
    context,
  });
  const reconciler = new Reconciler({
    store,
    rules,
    label: TEST_LABEL,
    repairer: new Repairer(options.transport, events, TEST_LABEL),
    events,
    broken: new BrokenPods(metrics.brokenPods, metrics.detections),
    safety,
    context,
    metrics,
    logger,
  });
  return { reconciler, safety, store, events, metrics, registry };
}
