// The composition root of the controller's parts, shared by run, scan and explain. Built in the order data flows,
// each part from parts already made (no forward references, no callbacks into something not built yet):
//   caches and their reflectors → the safety object → reconciler → queue and workers → triggers (cache changes → keys)
//   → the manager, which starts and stops them in order.
import type { Registry } from "prom-client";
import { EventRecorder } from "../act/event-recorder.js";
import { Repairer } from "../act/repairer.js";
import type { Config } from "../config/config.js";
import { BrokenPods } from "../controller/broken-pods.js";
import { Controller, type Leadership } from "../controller/controller.js";
import { Manager, type Runnable } from "../controller/manager.js";
import { Reconciler, type ReconcilerDeps } from "../controller/reconciler.js";
import { StormReport } from "../controller/storm-report.js";
import { podTriggers, type Request } from "../controller/triggers.js";
import { UnenrolledSince } from "../controller/unenrolled-since.js";
import type { DetectContext } from "../detect/detect.js";
import type { PodFacts } from "../detect/facts.js";
import { ISTIO_RULE, type IstioRepairState } from "../detect/istio-repair-settings.js";
import { isAmbient } from "../detect/rule.js";
import { factsSchema, toPodFacts } from "../detect/to-pod-facts.js";
import { IstioRepairWatch } from "../informer/istio-repair-watch.js";
import { type NamespaceFacts, namespaceStore, toNamespaceFacts } from "../informer/namespace-facts.js";
import { type NodeAgentGate, watchNodeAgents } from "../informer/node-agent-watcher.js";
import { PodStore } from "../informer/pod-store.js";
import { Reflector } from "../informer/reflector.js";
import { reflectorSettings } from "../informer/reflector-settings.js";
import { watchTelemetry } from "../informer/watch-telemetry.js";
import type { KubeTransport } from "../kube/transport.js";
import { reportIstioRepair } from "../observe/istio-repair-report.js";
import type { Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";
import { buildStartupTaints } from "../prevent/build-startup-taints.js";
import type { StartupTaints } from "../prevent/startup-taints.js";
import { WorkQueue } from "../queue/work-queue.js";
import type { ReadyBasis } from "../safety/cni-agents.js";
import { Safety } from "../safety/safety.js";
import { Publisher } from "../util/publisher.js";

export type ControllerParts = {
  /** Starts and stops everything below in order. */
  readonly manager: Manager;
  readonly pods: PodStore;
  readonly queue: WorkQueue;
  readonly broken: BrokenPods;
  /** The safety object: judge (scan and explain judge dry), holds, storm. */
  readonly safety: Safety;
  /** The node-agent gates each rule's deletions wait for (explain shows them). */
  readonly agentGates: ReadonlyMap<string, readonly NodeAgentGate[]>;
  /** Startup-taint management, when --startup-taint is on. */
  readonly startupTaints: StartupTaints | undefined;
  /** The clock and namespace labels, as detection needs them now. */
  readonly context: () => DetectContext;
  /** What is known of Istio's own repair now; undefined when not read (--istio-repair=ignore, no istio rule). */
  readonly istioRepair: (() => IstioRepairState) | undefined;
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
};

export function composeController(
  config: Config,
  transport: KubeTransport,
  metrics: Metrics,
  logger: Logger,
  options: ComposeOptions = {},
): ControllerParts {
  const watchLog = logger.child({ component: "reflector" });
  const settings = reflectorSettings(config, transport);
  const failed = options.onWatchError;

  // 1. Caches and their reflectors: pods, the node agents deletions wait for, and (ambient only) namespaces.
  const pods = new PodStore();
  const schema = factsSchema(config.rules, { labelKeys: [config.label.key] });
  // Several namespaces cannot be a field selector: drop the others at the edge, before they cost memory.
  const wanted = new Set(config.namespaces);
  const inScope = (namespace: string) => wanted.size <= 1 || wanted.has(namespace);
  const podReflector = new Reflector<PodFacts>({
    ...settings,
    collection: "pods",
    scope: config.scope,
    watchList: config.watchList,
    store: pods,
    transform: (pod) => {
      const facts = toPodFacts(pod, schema);
      return facts && inScope(facts.namespace) ? facts : undefined;
    },
    observer: watchTelemetry(metrics, "pods", watchLog, { listed: (count) => metrics.cachePods.set(count), failed }),
    ...(options.onListProgress && { onListProgress: options.onListProgress }),
  });
  const nodeAgents = watchNodeAgents(config, settings, { metrics, log: watchLog, failed });
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

  // Istio's own repair settings (the istio rule defers to them), unless --istio-repair=ignore.
  const istioRule = config.rules.find((rule) => rule.name === ISTIO_RULE);
  const istioRepair =
    config.istioRepair === undefined || istioRule === undefined || isAmbient(istioRule)
      ? undefined
      : {
          validator: istioRule.initContainer,
          watch: new IstioRepairWatch({
            namespace: config.istioRepair.namespace,
            settings,
            observer: (what, name) => watchTelemetry(metrics, name, watchLog.child({ watch: what }), { failed }),
            onWarning: (warning) => logger.warn("Istio's repair settings: a value is not a boolean", { warning }),
          }),
        };
  istioRepair?.watch.subscribe(reportIstioRepair(metrics, logger.child({ component: "istio-repair" })));

  // 2. The safety object: every guard, the holds, and the events that may free a held pod (the triggers listen).
  const safety: Safety = new Safety({
    limits: config.limits,
    loopBackoff: config.loopBackoff,
    storm: config.storm,
    nodeAgentGates: nodeAgents.gatesByRule,
    ...(options.agentReadyBasis && { readyBasis: options.agentReadyBasis }),
    ...(istioRepair && {
      istioRepair: { rule: ISTIO_RULE, validator: istioRepair.validator, state: () => istioRepair.watch.state },
    }),
    rules: config.rules,
    mode: config.mode,
    label: config.label,
    deleteBarePods: config.deleteBarePods,
    metrics,
    context: () => context(),
  });
  // Ambient enrolment grace: when each pod was seen entering scope, and when its node's agents turned Ready.
  const unenrolled = new UnenrolledSince(ambientRules);
  const context = (): DetectContext => {
    const nowMs = Date.now();
    return {
      nowMs,
      namespaceLabel: (namespace, key) => namespaces.get(namespace)?.labels[key],
      seenUnenrolledSince: (uid) => unenrolled.sinceOf(uid, nowMs),
      agentsReadySince: (node, rule) => safety.agentsReadySince(node, rule),
    };
  };

  // 3. The reconciler: detect, decide under the guards, act.
  const broken = new BrokenPods(metrics.brokenPods, metrics.detections);
  const events = new EventRecorder(transport, logger.child({ component: "events" }), () => metrics.eventsFailed.inc());
  const reconciler = new Reconciler({
    store: pods,
    rules: config.rules,
    label: config.label,
    repairer: new Repairer(transport, events, config.label),
    events,
    broken,
    safety,
    context,
    metrics,
    logger: logger.child({ component: "reconciler" }),
    ...(options.onOutcome && { onOutcome: options.onOutcome }),
  });

  // 4. The queue and the workers. A new term paces from empty (the previous leader may have spent the burst a
  // moment ago: see README) and looks at every known broken pod again.
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
    leadership: options.leadership,
    onLeading: () => {
      safety.startTerm();
      resync.publish();
    },
    metrics: standard.controller(standard.name, config.workers),
    retriesExhausted: metrics.retriesExhausted,
    logger: logger.child({ component: "controller" }),
  });

  // 5. What each change does, in order: the caches' own bookkeeping first, then the triggers' re-queues.
  const stormReport = new StormReport(safety.storm, metrics, logger.child({ component: "controller" }));
  podReflector.subscribe((change) => {
    metrics.cachePods.set(pods.size);
    if (change.previous && change.previous.uid !== change.current?.uid) unenrolled.forget(change.previous.uid);
    if (change.current) unenrolled.observe(change.current, context());
    safety.observe(change);
  });
  namespaceReflector?.subscribe((change) => {
    const now = context();
    for (const facts of pods.values()) if (facts.namespace === change.key) unenrolled.observe(facts, now);
  });
  for (const [rule, gates] of nodeAgents.gatesByRule) {
    for (const { agents } of gates.filter((gate) => gate.reason === "cni_agent_not_ready")) {
      const watch = nodeAgents.watches.find((candidate) => candidate.agents === agents);
      watch?.reflector.subscribe(() => {
        metrics.cniAgentPods.set({ rule, ready: "true" }, agents.readyCount);
        metrics.cniAgentPods.set({ rule, ready: "false" }, agents.count - agents.readyCount);
      });
    }
  }
  safety.events.subscribe((event) => {
    if (event.kind === "storm") stormReport.transition(event.transition);
  });
  const enqueue = ({ key, afterMs }: Request) => {
    if (afterMs === undefined) queue.add(key);
    else queue.addAfter(key, afterMs);
  };
  const triggers = podTriggers(
    {
      pods: podReflector,
      agents: nodeAgents.watches.map((watch) => watch.reflector),
      namespaces: namespaceReflector,
      guards: safety.events,
      istioRepair: istioRepair?.watch,
      resync,
    },
    { rules: config.rules, context, podStore: pods, broken, holds: safety.holds },
  );
  for (const trigger of triggers) trigger.connect(enqueue);

  // 6. Startup taints (issue 17): its node watch and worker, fed by the same CNI agent caches.
  const cniAgents = [...nodeAgents.gatesByRule.values()]
    .flat()
    .filter((gate) => gate.reason === "cni_agent_not_ready")
    .map((gate) => gate.agents);
  const startupTaints = buildStartupTaints(config, {
    transport,
    agents: [...new Set(cniAgents)],
    logger: logger.child({ component: "startup-taints" }),
    registry: options.registry,
    standard,
    leadership: options.leadership,
    readOnly: options.startupTaintsReadOnly === true,
    events,
    observer: watchTelemetry(metrics, "nodes", watchLog.child({ watch: "nodes" }), { failed }),
  });
  if (startupTaints) {
    for (const watch of nodeAgents.watches) {
      watch.reflector.subscribe((change) =>
        startupTaints.taints.onAgentChange(change.current?.nodeName ?? change.previous?.nodeName),
      );
    }
  }

  // 7. The manager: reflectors, then election, then (caches listed) the workers and the periodic ticks.
  const manager = new Manager({
    reflectors: [
      podReflector,
      ...nodeAgents.watches.map((watch) => watch.reflector),
      ...(namespaceReflector ? [namespaceReflector] : []),
      ...(istioRepair ? [istioRepair.watch] : []),
      ...(startupTaints ? [startupTaints.reflector] : []),
    ],
    elector: options.elector,
    workers: [controller, ...(startupTaints ? [startupTaints.controller] : [])],
    ticks: [...(config.resyncPeriodMs > 0 ? [{ everyMs: config.resyncPeriodMs, tick: () => resync.publish() }] : [])],
    outbox: events,
    logger: logger.child({ component: "manager" }),
  });
  return {
    manager,
    pods,
    queue,
    broken,
    safety,
    agentGates: nodeAgents.gatesByRule,
    startupTaints: startupTaints?.taints,
    context,
    istioRepair: istioRepair && (() => istioRepair.watch.state),
  };
}
