// Builds the data flow the controller and `scan --repair` share: reflectors → caches → controller → repairer,
// with the safety guards in between.
import { EventRecorder } from "../act/event-recorder.js";
import { Repairer } from "../act/repairer.js";
import type { Config } from "../config/config.js";
import { BrokenPods } from "../controller/broken-pods.js";
import { Controller, type Leadership } from "../controller/controller.js";
import { Reconciler } from "../controller/reconciler.js";
import type { PodFacts } from "../detect/facts.js";
import { factsSchema, toPodFacts } from "../detect/to-pod-facts.js";
import type { StoreChange } from "../informer/facts-store.js";
import { PodStore } from "../informer/pod-store.js";
import { PodReflector, type ReflectorObserver } from "../informer/reflector.js";
import type { KubeTransport } from "../kube/transport.js";
import type { Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";
import { WorkQueue } from "../queue/work-queue.js";
import { type AgentFacts, CniAgents, toAgentFacts } from "../safety/cni-agents.js";
import { SafetyGuards } from "../safety/guards.js";
import { Holds } from "../safety/holds.js";

export type Pipeline = {
  readonly pods: PodStore;
  readonly podReflector: PodReflector<PodFacts>;
  readonly agentReflectors: readonly PodReflector<AgentFacts>[];
  readonly controller: Controller;
  readonly queue: WorkQueue;
  readonly broken: BrokenPods;
  readonly holds: Holds;
  readonly guards: SafetyGuards;
  /** Pod and agent caches hold their first full list. */
  readonly synced: () => boolean;
  /** Milliseconds since the least recently active watch showed life. */
  readonly idleMs: () => number;
};

export type PipelineOptions = {
  /** Without it this instance always acts. */
  readonly leadership?: Leadership;
  /** Called after each page of the initial pod list, with the pods listed so far (scan's progress line). */
  readonly onListProgress?: (pods: number) => void;
  /** Called when a list or watch fails (the reflector retries regardless); scan gives up on the first. */
  readonly onWatchError?: (error: unknown) => void;
};

export function buildPipeline(
  config: Config,
  transport: KubeTransport,
  metrics: Metrics,
  logger: Logger,
  options: PipelineOptions = {},
): Pipeline {
  const { leadership } = options;
  const watchLog = logger.child({ component: "reflector" });
  const pods = new PodStore();
  const schema = factsSchema(config.rules, { labelKeys: [config.label.key] });
  // Several namespaces cannot be a field selector: drop the others at the edge, before they cost memory.
  const namespaces = new Set(config.namespaces);
  const inScope = (namespace: string) => namespaces.size <= 1 || namespaces.has(namespace);

  const agentsByRule = new Map<string, CniAgents>();
  const agentReflectors: PodReflector<AgentFacts>[] = [];
  let controller: Controller | undefined;
  if (config.cniAgentGate) {
    const gate = config.cniAgentGate;
    const bySelector = new Map<string, CniAgents>();
    for (const rule of config.rules) {
      const selector = gate.selector ?? rule.cniAgentSelector ?? "";
      let agents = bySelector.get(selector);
      if (!agents) {
        agents = new CniAgents();
        bySelector.set(selector, agents);
        const observed = agents;
        const ruleNames = () => [...agentsByRule].filter(([, a]) => a === observed).map(([name]) => name);
        agentReflectors.push(
          new PodReflector<AgentFacts>({
            transport,
            scope: {
              labelSelector: selector,
              fieldSelector: [
                config.nodeName ? `spec.nodeName=${config.nodeName}` : "",
                gate.namespace ? `metadata.namespace=${gate.namespace}` : "",
              ]
                .filter((part) => part !== "")
                .join(","),
            },
            store: agents.store,
            transform: toAgentFacts,
            pageSize: config.listPageSize,
            watchTimeoutMs: config.watchTimeoutMs,
            stallTimeoutMs: config.watchStallTimeoutMs,
            backoff: { baseMs: 500, maxMs: 30_000, jitter: 0.5 },
            observer: watchObserver<AgentFacts>(metrics, watchLog.child({ watch: `agents ${selector}` }), {
              change: (change) => {
                for (const name of ruleNames()) {
                  metrics.cniAgentPods.set({ rule: name, ready: "true" }, observed.readyCount);
                  metrics.cniAgentPods.set({ rule: name, ready: "false" }, observed.count - observed.readyCount);
                }
                controller?.onAgentChange(change.current?.nodeName ?? change.previous?.nodeName);
              },
              error: options.onWatchError,
              listed: (count) => {
                if (count === 0) {
                  watchLog.warn("CNI agent gate: no pod matches the agent selector; broken pods will be held", {
                    selector,
                    namespace: gate.namespace ?? "(all)",
                  });
                }
              },
            }),
          }),
        );
      }
      agentsByRule.set(rule.name, agents);
    }
  }

  const guards = new SafetyGuards({
    limits: config.limits,
    loopBackoff: config.loopBackoff,
    storm: config.storm,
    agentGate: config.cniAgentGate && { minReadyMs: config.cniAgentGate.minReadyMs, agentsByRule },
  });
  const holds = new Holds(metrics.podsHeld, metrics.holdsTotal);
  const broken = new BrokenPods(metrics.brokenPods, metrics.detections);
  const queue = new WorkQueue({
    backoff: { baseMs: config.retryBaseDelayMs, maxMs: config.retryMaxDelayMs, jitter: 0.5 },
  });
  const events = new EventRecorder(transport, logger.child({ component: "events" }), () => metrics.eventsFailed.inc());
  const reconciler = new Reconciler({
    store: pods,
    rules: config.rules,
    mode: config.mode,
    label: config.label,
    deleteBarePods: config.deleteBarePods,
    repairer: new Repairer(transport, events, config.label),
    events,
    broken,
    guards,
    holds,
    metrics,
    logger: logger.child({ component: "reconciler" }),
  });
  controller = new Controller({
    queue,
    reconciler,
    broken,
    guards,
    holds,
    rules: config.rules,
    workers: config.workers,
    maxRetries: config.maxRetries,
    resyncPeriodMs: config.resyncPeriodMs,
    ...(leadership && { leadership }),
    metrics,
    logger: logger.child({ component: "controller" }),
  });
  const podController = controller;
  const podReflector = new PodReflector({
    transport,
    scope: { labelSelector: config.labelSelector, fieldSelector: config.fieldSelector },
    store: pods,
    transform: (pod) => {
      const facts = toPodFacts(pod, schema);
      return facts && inScope(facts.namespace) ? facts : undefined;
    },
    pageSize: config.listPageSize,
    watchTimeoutMs: config.watchTimeoutMs,
    stallTimeoutMs: config.watchStallTimeoutMs,
    backoff: { baseMs: 500, maxMs: 30_000, jitter: 0.5 },
    observer: watchObserver<PodFacts>(metrics, watchLog, {
      change: (change) => {
        metrics.cachePods.set(pods.size);
        podController.onChange(change);
      },
      listed: (count) => metrics.cachePods.set(count),
      error: options.onWatchError,
    }),
    ...(options.onListProgress && { onListProgress: options.onListProgress }),
  });
  const reflectors = [podReflector, ...agentReflectors];
  return {
    pods,
    podReflector,
    agentReflectors,
    controller,
    queue,
    broken,
    holds,
    guards,
    synced: () => reflectors.every((reflector) => reflector.synced),
    idleMs: () => Math.max(...reflectors.map((reflector) => reflector.idleMs)),
  };
}

/** The metrics and logs every watch reports, plus what this particular cache does with its changes. */
function watchObserver<T>(
  metrics: Metrics,
  log: Logger,
  own: {
    change: (change: StoreChange<T>) => void;
    listed?: (count: number) => void;
    error?: ((error: unknown) => void) | undefined;
  },
): ReflectorObserver<T> {
  return {
    change: own.change,
    listed: (count, durationMs) => {
      metrics.lastSyncTimestampSeconds.set(Date.now() / 1000);
      log.info("listed", { count, durationMs: Math.round(durationMs) });
      own.listed?.(count);
    },
    watchEvent: (type) => {
      if (type === "ADDED" || type === "MODIFIED" || type === "DELETED" || type === "BOOKMARK") {
        metrics.watchEvents.inc({ type });
      }
      metrics.lastSyncTimestampSeconds.set(Date.now() / 1000);
    },
    watchRestart: (reason, error) => {
      metrics.watchRestarts.inc({ reason });
      const fields = { reason, ...(error !== undefined && { error: (error as Error).message }) };
      if (reason === "timeout") log.debug("watch restarted", fields);
      else log.warn("watch restarted", fields);
      if (reason === "error" || reason === "gone") own.error?.(error);
    },
  };
}
