// Builds the data flow the controller and `scan` share: reflectors → caches → controller → repairer, with the
// safety guards in between.

import type { Registry } from "prom-client";
import { EventRecorder } from "../act/event-recorder.js";
import { Repairer } from "../act/repairer.js";
import type { Config } from "../config/config.js";
import { BrokenPods } from "../controller/broken-pods.js";
import { Controller, type Leadership } from "../controller/controller.js";
import { Reconciler, type ReconcilerDeps } from "../controller/reconciler.js";
import { UnenrolledSince } from "../controller/unenrolled-since.js";
import type { DetectContext } from "../detect/detect.js";
import { type PodFacts, podKey } from "../detect/facts.js";
import { isAmbient } from "../detect/rule.js";
import { factsSchema, toPodFacts } from "../detect/to-pod-facts.js";
import type { FactsStore, StoreChange } from "../informer/facts-store.js";
import { type NamespaceFacts, namespaceStore, toNamespaceFacts } from "../informer/namespace-facts.js";
import { PodStore } from "../informer/pod-store.js";
import { PodReflector, type ReflectorObserver, type RunningCache } from "../informer/reflector.js";
import type { KubeTransport } from "../kube/transport.js";
import type { Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";
import { buildStartupTaints } from "../prevent/build-startup-taints.js";
import type { StartupTaints } from "../prevent/startup-taints.js";
import { WorkQueue } from "../queue/work-queue.js";
import { type NodeAgentGate, SafetyGuards } from "../safety/guards.js";
import { Holds } from "../safety/holds.js";
import { messageOf } from "../util/message-of.js";
import { buildNodeAgents } from "./node-agents.js";

export type Pipeline = {
  readonly pods: PodStore;
  /** Every reflector: pods first, then node agents and namespaces. */
  readonly reflectors: readonly RunningCache[];
  readonly controller: Controller;
  /** Writes Events in the background: drain before closing the transport. */
  readonly events: EventRecorder;
  readonly queue: WorkQueue;
  readonly broken: BrokenPods;
  readonly holds: Holds;
  readonly guards: SafetyGuards;
  /** The node-agent gates each rule's deletions wait for (explain shows them). */
  readonly agentGates: ReadonlyMap<string, readonly NodeAgentGate[]>;
  /** Startup-taint management, when --startup-taint is on. */
  readonly startupTaints: StartupTaints | undefined;
  /** The clock and namespace labels, as detection needs them now. */
  readonly context: () => DetectContext;
  /** Every cache holds its first full list. */
  readonly synced: () => boolean;
  /** Milliseconds since the API server last answered the cache that has heard from it least recently. */
  readonly idleMs: () => number;
};

export type PipelineOptions = {
  /** Without it this instance always acts. */
  readonly leadership?: Leadership;
  /** Called after each page of the initial pod list, with the pods listed so far (scan's progress line). */
  readonly onListProgress?: (pods: number) => void;
  /** Called when a list or watch fails (the reflector retries regardless); scan gives up on the first. */
  readonly onWatchError?: (error: unknown) => void;
  /** Called with each write's outcome (scan --repair prints results, not plans). */
  readonly onOutcome?: ReconcilerDeps["onOutcome"];
  /** Where the startup-taint metrics go (the controller's registry); scan has none. */
  readonly registry?: Registry;
};

export function buildPipeline(
  config: Config,
  transport: KubeTransport,
  metrics: Metrics,
  logger: Logger,
  options: PipelineOptions = {},
): Pipeline {
  const watchLog = logger.child({ component: "reflector" });
  const reflectorDefaults = {
    transport,
    pageSize: config.listPageSize,
    watchTimeoutMs: config.watchTimeoutMs,
    stallTimeoutMs: config.watchStallTimeoutMs,
    backoff: { baseMs: 500, maxMs: 30_000, jitter: 0.5 },
  };
  // The controller is made below; the caches' observers reach it once it exists.
  let controller: Controller | undefined;
  const reflectors: RunningCache[] = [];

  // Namespaces: only the ambient rule needs their labels (a namespace can put its pods in the mesh).
  const ambientRules = config.rules.filter(isAmbient);
  const namespaces: FactsStore<NamespaceFacts> = namespaceStore();
  const namespaceLabelKeys = [...new Set(ambientRules.map((rule) => rule.namespaceSelector.key))];
  // Ambient enrolment grace: when each pod was seen entering scope, and when its node's agents turned Ready.
  const unenrolled = new UnenrolledSince(ambientRules);
  const context = (): DetectContext => {
    const nowMs = Date.now();
    return {
      nowMs,
      namespaceLabel: (namespace, key) => namespaces.get(namespace)?.labels[key],
      seenUnenrolledSince: (uid) => unenrolled.sinceOf(uid, nowMs),
      agentsReadySince: (node, rule) => guards.agentsReadySince(node, rule),
    };
  };

  const nodeAgents = buildNodeAgents(config, transport, (what, agents) =>
    watchObserver(metrics, watchLog.child({ watch: what }), {
      change: (change) => {
        for (const [rule, gates] of nodeAgents.gatesByRule) {
          if (!gates.some((gate) => gate.agents === agents && gate.reason === "cni_agent_not_ready")) continue;
          metrics.cniAgentPods.set({ rule, ready: "true" }, agents.readyCount);
          metrics.cniAgentPods.set({ rule, ready: "false" }, agents.count - agents.readyCount);
        }
        controller?.onAgentChange(change.current?.nodeName ?? change.previous?.nodeName);
        startupTaints?.taints.onAgentChange(change.current?.nodeName ?? change.previous?.nodeName);
      },
      listed: (count) => {
        if (count === 0)
          watchLog.warn("node agent gate: no pod matches the selector; broken pods will be held", { what });
      },
      error: options.onWatchError,
    }),
  );

  // The CNI agents (not ztunnel) every node needs Ready before its startup taint goes.
  const cniAgents = [...nodeAgents.gatesByRule.values()]
    .flat()
    .filter((gate) => gate.reason === "cni_agent_not_ready")
    .map((gate) => gate.agents);
  const startupTaints = buildStartupTaints(config, {
    transport,
    agents: [...new Set(cniAgents)],
    agentReflectors: nodeAgents.reflectors,
    logger: logger.child({ component: "startup-taints" }),
    registry: options.registry,
    leadership: options.leadership,
    onEventFailed: () => metrics.eventsFailed.inc(),
    observe: (change) =>
      watchObserver(metrics, watchLog.child({ watch: "nodes" }), { change, error: options.onWatchError }),
  });

  const guards = new SafetyGuards({
    limits: config.limits,
    loopBackoff: config.loopBackoff,
    storm: config.storm,
    nodeAgentGates: nodeAgents.gatesByRule,
    onTurnMoved: (key, waitMs) => controller?.wake(key, waitMs),
    onStormTransition: (transition) => controller?.onStormTransition(transition),
  });
  const holds = new Holds(metrics.podsHeld, metrics.holdsTotal);
  const broken = new BrokenPods(metrics.brokenPods, metrics.detections);
  const queue = new WorkQueue({
    backoff: { baseMs: config.retryBaseDelayMs, maxMs: config.retryMaxDelayMs, jitter: 0.5 },
  });
  const pods = new PodStore();
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
    context,
    metrics,
    logger: logger.child({ component: "reconciler" }),
    ...(options.onOutcome && { onOutcome: options.onOutcome }),
  });
  controller = new Controller({
    queue,
    reconciler,
    broken,
    guards,
    holds,
    rules: config.rules,
    context,
    podKeysIn: function* (namespace) {
      for (const facts of pods.values()) if (facts.namespace === namespace) yield podKey(namespace, facts.name);
    },
    workers: config.workers,
    maxRetries: config.maxRetries,
    resyncPeriodMs: config.resyncPeriodMs,
    ...(options.leadership && { leadership: options.leadership }),
    cachesSynced: async (signal) =>
      (await Promise.all(reflectors.map((reflector) => reflector.waitForSync(signal)))).every(Boolean),
    metrics,
    logger: logger.child({ component: "controller" }),
  });
  const podController = controller;

  const schema = factsSchema(config.rules, { labelKeys: [config.label.key] });
  // Several namespaces cannot be a field selector: drop the others at the edge, before they cost memory.
  const wanted = new Set(config.namespaces);
  const inScope = (namespace: string) => wanted.size <= 1 || wanted.has(namespace);
  const podReflector = new PodReflector<PodFacts>({
    ...reflectorDefaults,
    collection: "pods",
    scope: config.scope,
    watchList: config.watchList,
    store: pods,
    transform: (pod) => {
      const facts = toPodFacts(pod, schema);
      return facts && inScope(facts.namespace) ? facts : undefined;
    },
    observer: watchObserver<PodFacts>(metrics, watchLog, {
      change: (change) => {
        metrics.cachePods.set(pods.size);
        if (change.previous && change.previous.uid !== change.current?.uid) unenrolled.forget(change.previous.uid);
        if (change.current) unenrolled.observe(change.current, context());
        podController.onChange(change);
      },
      listed: (count) => metrics.cachePods.set(count),
      error: options.onWatchError,
    }),
    ...(options.onListProgress && { onListProgress: options.onListProgress }),
  });

  const namespaceReflectors =
    ambientRules.length === 0
      ? []
      : [
          new PodReflector<NamespaceFacts>({
            ...reflectorDefaults,
            collection: "namespaces",
            scope: {},
            store: namespaces,
            transform: (raw) => toNamespaceFacts(raw, namespaceLabelKeys),
            observer: watchObserver<NamespaceFacts>(metrics, watchLog.child({ watch: "namespaces" }), {
              // A namespace turned ambient (or back) changes the scope of every pod in it at once.
              change: (change) => {
                const now = context();
                for (const facts of pods.values()) if (facts.namespace === change.key) unenrolled.observe(facts, now);
                podController.onNamespaceChange(change.key);
              },
              error: options.onWatchError,
            }),
          }),
        ];

  reflectors.push(podReflector, ...nodeAgents.reflectors, ...namespaceReflectors);
  if (startupTaints) reflectors.push(startupTaints.reflector);
  return {
    pods,
    reflectors,
    controller,
    events,
    queue,
    broken,
    holds,
    guards,
    agentGates: nodeAgents.gatesByRule,
    startupTaints: startupTaints?.taints,
    context,
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
      const fields = { reason, ...(error !== undefined && { error: messageOf(error) }) };
      if (reason === "timeout") log.debug("watch restarted", fields);
      else log.warn("watch restarted", fields);
      if (reason === "error" || reason === "gone") own.error?.(error);
    },
  };
}
