// The composition root of run, scan and explain: it only constructs, in the order data flows, each part from parts
// already made (no forward reference):
//   what the guards read (node agents, namespaces, Istio's settings) → the agents' readiness → detection's context
//   → the safety object → the pod cache (its bookkeeping in its own order) → the startup-taint node cache and judge
//   → the query facade scan and explain read the caches through
//   → [run, scan: the Event writer → the pod controller: reconciler, queue, workers, triggers → the startup-taint
//   controller: reconciler, queue, worker, triggers → the manager, which starts and stops them in order].
// Explain composes the caches and the query only: no Event writer, queue, worker, controller, manager or election.
import type { Registry } from "prom-client";
import { EventRecorder } from "../act/event-recorder.js";
import { Repairer } from "../act/repairer.js";
import type { Config } from "../config/config.js";
import { BrokenPods } from "../controller/broken-pods.js";
import type { Controller, Leadership } from "../controller/controller.js";
import { Manager, type Runnable } from "../controller/manager.js";
import { buildPodController } from "../controller/pod-controller.js";
import type { ReconcilerDeps } from "../controller/reconciler.js";
import { StormReport } from "../controller/storm-report.js";
import { UnenrolledSince } from "../controller/unenrolled-since.js";
import type { DetectContext } from "../detect/detect.js";
import { ISTIO_RULE } from "../detect/istio-repair-settings.js";
import { isAmbient } from "../detect/rule.js";
import { IstioRepairWatch } from "../informer/istio-repair-watch.js";
import { type NamespaceFacts, namespaceStore, toNamespaceFacts } from "../informer/namespace-facts.js";
import { cniAgentSets, type NodeAgentWatcher, watchNodeAgents } from "../informer/node-agent-watcher.js";
import { PodCache } from "../informer/pod-cache.js";
import { Reflector, type RunningCache } from "../informer/reflector.js";
import { type ReflectorSettings, reflectorSettings } from "../informer/reflector-settings.js";
import { watchTelemetry } from "../informer/watch-telemetry.js";
import type { KubeTransport } from "../kube/transport.js";
import { reportIstioRepair } from "../observe/istio-repair-report.js";
import type { Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";
import {
  buildStartupTaintCaches,
  buildStartupTaintController,
  type StartupTaintCaches,
} from "../prevent/build-startup-taints.js";
import { AgentReadiness } from "../safety/agent-readiness.js";
import type { ReadyBasis } from "../safety/cni-agents.js";
import { Safety } from "../safety/safety.js";
import { type Clock, systemClock } from "../util/clock.js";
import { PodQuery } from "./query.js";

export type ControllerParts = {
  /** Starts and stops everything in order. */
  readonly manager: Manager;
  /** The pod controller (scan --repair waits until it is idle). */
  readonly controller: Controller;
  /** The caches' read-only questions. */
  readonly query: PodQuery;
  /** The clock and namespace labels, as detection needs them now (run counts the broken pods it starts with). */
  readonly context: () => DetectContext;
};

/** Explain's parts: the caches the judgement reads, to list once, and the questions asked of them. */
export type QueryParts = {
  readonly caches: readonly RunningCache[];
  readonly query: PodQuery;
};

export type ComposeOptions = {
  /** Without it this instance always acts. */
  readonly leadership?: Leadership | undefined;
  /** The leader election the manager runs (it is also the leadership). */
  readonly elector?: Runnable | undefined;
  /** Called after each page of the initial pod list, with the pods listed so far (scan's progress line). */
  readonly onListProgress?: (pods: number) => void;
  /** Called when a list or watch fails (the reflector retries regardless); scan gives up on the first. */
  readonly onWatchError?: (error: unknown) => void;
  /** Called with each write's outcome (scan --repair prints results, not plans). */
  readonly onOutcome?: ReconcilerDeps["onOutcome"];
  /** Where the startup-taint metrics go (the controller's registry); scan has none. */
  readonly registry?: Registry;
  /** Startup taints are judged and shown, never written (scan, even with --repair: it repairs pods only). */
  readonly startupTaintsReadOnly?: boolean;
  /** The node-agent gate's Ready time: "observed" for run (the default), "claimed" for one-shot commands. */
  readonly agentReadyBasis?: ReadyBasis;
  /** The clock every time-based part goes by (a test sets the wall clock with it); the system's by default. */
  readonly clock?: Clock | undefined;
};

/** Never leads: the workers of a read-only command (scan without --repair) take no key. */
export const NEVER_LEADS: Leadership = { isLeader: false, term: 0, waitForLeadership: async () => false };

export function composeController(
  config: Config,
  transport: KubeTransport,
  metrics: Metrics,
  logger: Logger,
  options: ComposeOptions = {},
): ControllerParts {
  const caches = composeCaches(config, transport, metrics, logger, options);
  const { nodeAgents, safety, startupTaints } = caches;
  const clock = options.clock ?? systemClock;
  // The Events every writer posts (drained by the manager at shutdown).
  const events = new EventRecorder(transport, logger.child({ component: "events" }), () => metrics.eventsFailed.inc());

  // The pod controller: reconciler, queue, workers, and the triggers that feed it from the caches.
  const podController = buildPodController(config, {
    cache: caches.pods,
    repairer: new Repairer(transport, events, config.label),
    events,
    safety,
    broken: new BrokenPods(metrics.brokenPods, metrics.detections),
    context: caches.context,
    sources: {
      agents: nodeAgents.watches.map((watch) => watch.reflector),
      namespaces: caches.namespaceReflector,
      guards: safety.events,
      istioRepair: caches.istioRepair?.watch,
    },
    leadership: options.leadership,
    metrics,
    logger,
    onOutcome: options.onOutcome,
  });
  // The startup-taint controller (issue 17): its reconciler, queue, worker, and the triggers that feed it from the
  // node cache and the CNI agent caches.
  const taintController =
    startupTaints &&
    buildStartupTaintController(config, startupTaints, {
      transport,
      agentChanges: cniAgentSets(nodeAgents).map((set) => set.watch.reflector),
      logger: logger.child({ component: "startup-taints" }),
      registry: options.registry,
      standard: metrics.controllerRuntime,
      leadership: options.leadership,
      readOnly: options.startupTaintsReadOnly === true,
      events,
      clock,
    });

  // The manager: reflectors, then election, then (caches listed) the workers and the periodic ticks.
  const manager = new Manager({
    reflectors: caches.reflectors,
    elector: options.elector,
    workers: [podController.controller, ...(taintController ? [taintController] : [])],
    ticks: [
      ...(config.resyncPeriodMs > 0
        ? [{ everyMs: config.resyncPeriodMs, tick: () => podController.resync.publish() }]
        : []),
    ],
    outbox: events,
    logger: logger.child({ component: "manager" }),
  });
  return { manager, controller: podController.controller, query: caches.query, context: caches.context };
}

/**
 * Explain's parts: every cache a judgement reads (the pods too: the storm breaker's shares count them) with their
 * bookkeeping, read-only, and the query. Nothing else is built: no Event writer, queue, worker, controller, manager
 * or election.
 */
export function composeQuery(
  config: Config,
  transport: KubeTransport,
  metrics: Metrics,
  logger: Logger,
  options: Pick<ComposeOptions, "onWatchError" | "agentReadyBasis" | "clock"> = {},
): QueryParts {
  const caches = composeCaches(config, transport, metrics, logger, options);
  return { caches: caches.reflectors, query: caches.query };
}

type Caches = {
  readonly nodeAgents: NodeAgentWatcher;
  readonly namespaceReflector: Reflector<NamespaceFacts> | undefined;
  readonly istioRepair: IstioRepair | undefined;
  readonly safety: Safety;
  readonly context: () => DetectContext;
  readonly pods: PodCache;
  readonly startupTaints: StartupTaintCaches | undefined;
  /** Every cache above, the pods first (the manager's start order). */
  readonly reflectors: readonly RunningCache[];
  readonly query: PodQuery;
};

/** The caches, the guards over them, and the query: what run, scan and explain all read; nothing that writes. */
function composeCaches(
  config: Config,
  transport: KubeTransport,
  metrics: Metrics,
  logger: Logger,
  options: Pick<ComposeOptions, "onListProgress" | "onWatchError" | "agentReadyBasis" | "clock">,
): Caches {
  const watchLog = logger.child({ component: "reflector" });
  const settings = reflectorSettings(config, transport);
  const failed = options.onWatchError;
  const clock = options.clock ?? systemClock;

  // 1. What the guards read: the node agents deletions wait for, (ambient only) namespaces, Istio's own repair.
  const nodeAgents = watchNodeAgents(config, settings, { metrics, log: watchLog, failed }, clock);
  const ambientRules = config.rules.filter(isAmbient);
  const namespaces = namespaceStore();
  const namespaceLabelKeys = [...new Set(ambientRules.map((rule) => rule.namespaceSelector.key))];
  const namespaceReflector =
    ambientRules.length === 0
      ? undefined
      : new Reflector<NamespaceFacts>({
          ...settings,
          collection: "namespaces",
          scope: {},
          store: namespaces,
          transform: (raw) => toNamespaceFacts(raw, namespaceLabelKeys),
          observer: watchTelemetry(metrics, "namespaces", watchLog.child({ watch: "namespaces" }), { failed }),
        });
  const istioRepair = istioRepairWatch(config, settings, metrics, logger, failed, nodeAgents);

  // 2. Every question about the node agents' readiness (the gate, the outage, the enrolment grace, Istio's fallback,
  // startup taints), by the command's Ready basis.
  const readiness = new AgentReadiness({
    gatesByRule: nodeAgents.gatesByRule,
    ...(options.agentReadyBasis && { basis: options.agentReadyBasis }),
    clock,
  });

  // 3. Detection's context. Ambient enrolment grace: when each pod was seen entering scope, and when its node's
  // agents turned Ready.
  const unenrolled = new UnenrolledSince(ambientRules, clock);
  const context = (): DetectContext => ({
    nowMs: clock.now(),
    namespaceLabel: (namespace, key) => namespaces.get(namespace)?.labels[key],
    seenUnenrolledSince: (uid) => unenrolled.sinceOf(uid),
    readiness,
  });

  // 4. The safety object: every guard, the holds, and the events that may free a held pod (the triggers listen).
  const safety = new Safety({
    limits: config.limits,
    loopBackoff: config.loopBackoff,
    storm: config.storm,
    readiness,
    ...(istioRepair && {
      istioRepair: { rule: ISTIO_RULE, validator: istioRepair.validator, state: () => istioRepair.watch.state },
    }),
    rules: config.rules,
    mode: config.mode,
    label: config.label,
    deleteBarePods: config.deleteBarePods,
    metrics,
    context,
    clock,
  });
  const stormReport = new StormReport(safety.storm, metrics, logger.child({ component: "controller" }));
  safety.events.subscribe((event) => {
    if (event.kind === "storm") stormReport.transition(event.transition);
  });

  // 5. The pod cache, with its bookkeeping in its own fixed order (enrolment clocks, detection, the safety
  // object's standings, the gauge) before anything it publishes to.
  const pods = new PodCache({
    config,
    settings,
    metrics,
    log: watchLog,
    failed,
    onListProgress: options.onListProgress,
    context,
    enrolment: unenrolled,
    namespaces: namespaceReflector,
    safety: ({ change, verdict }) => safety.observe(change, verdict),
  });

  // 6. Startup taints (issue 17): the node cache and the judgement over it, by the same CNI agents' readiness.
  const startupTaints = buildStartupTaintCaches(config, {
    settings,
    readiness,
    observer: watchTelemetry(metrics, "nodes", watchLog.child({ watch: "nodes" }), { failed }),
    clock,
  });

  return {
    nodeAgents,
    namespaceReflector,
    istioRepair,
    safety,
    context,
    pods,
    startupTaints,
    reflectors: [
      pods.reflector,
      ...nodeAgents.watches.map((watch) => watch.reflector),
      ...(namespaceReflector ? [namespaceReflector] : []),
      ...(istioRepair ? [istioRepair.watch] : []),
      ...(startupTaints ? [startupTaints.nodes.reflector] : []),
    ],
    // 7. The questions scan and explain ask of all of it.
    query: new PodQuery(config, {
      pods: pods.store,
      safety,
      agentGates: nodeAgents.gatesByRule,
      startupTaints: startupTaints?.judge,
      context,
      istioRepair: istioRepair && (() => istioRepair.watch.state),
      clock,
    }),
  };
}

type IstioRepair = { readonly validator: string; readonly watch: IstioRepairWatch };

/** Istio's own repair settings (the istio rule defers to them), unless --istio-repair=ignore or no sidecar rule. */
function istioRepairWatch(
  config: Config,
  settings: ReflectorSettings,
  metrics: Metrics,
  logger: Logger,
  failed: ComposeOptions["onWatchError"],
  nodeAgents: NodeAgentWatcher,
): IstioRepair | undefined {
  const istioRule = config.rules.find((rule) => rule.name === ISTIO_RULE);
  if (config.istioRepair === undefined || istioRule === undefined || isAmbient(istioRule)) return undefined;
  const watchLog = logger.child({ component: "reflector" });
  // Istio's agent pods as the node-agent gate watches them (none with the gate off: the DaemonSet alone then says
  // where the agent runs).
  const agentSet = cniAgentSets(nodeAgents).find((set) => set.rules.includes(ISTIO_RULE));
  const watch = new IstioRepairWatch({
    namespace: config.istioRepair.namespace,
    ...(agentSet && {
      agentPods: {
        namespaces: () => new Set([...agentSet.watch.agents.store.values()].map((agent) => agent.namespace)),
        cache: agentSet.watch.reflector,
      },
    }),
    settings,
    observer: (what, name) => watchTelemetry(metrics, name, watchLog.child({ watch: what }), { failed }),
    onWarning: (warning) => logger.warn("Istio's repair settings: a value is not a boolean", { warning }),
  });
  watch.subscribe(reportIstioRepair(metrics, logger.child({ component: "istio-repair" })));
  return { validator: istioRule.initContainer, watch };
}
