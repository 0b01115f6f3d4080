// The whole judgement `run` would make about one pod now, as data: the rule it falls under (or why none), the
// validator's states, the verdict, what each guard says (the node's agents with when they turned Ready), and the
// decision in each mode. Asked of the caches through the query facade, which judges with Safety.judge, dry (the path
// run takes); writes nothing.
import type { Config, Mode } from "../config/config.js";
import type { ContainerState, PodFacts, Termination } from "../detect/facts.js";
import { describeIstioRepair } from "../detect/istio-repair-settings.js";
import { isAmbient, type Marker, type Rule } from "../detect/rule.js";
import { actionOf, type GuardView } from "../safety/policy.js";
import type { AgentView, PodQuery } from "./query.js";
import { type StartupTaintRecord, startupTaintRecord } from "./scan-output.js";

type TerminationView = {
  readonly exitCode: number;
  readonly reason: string | null;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
};
type DecisionView = {
  readonly action: string;
  readonly hold: { readonly reason: string; readonly detail: string; readonly until: string | null } | null;
  readonly skip: string | null;
};

export type Explanation = {
  readonly pod: {
    readonly namespace: string;
    readonly name: string;
    readonly uid: string;
    readonly node: string | null;
    readonly phase: string | null;
    readonly owner: { readonly kind: string; readonly name: string } | null;
    readonly staticPod: boolean;
    readonly deleting: boolean;
  };
  /** Whether run watches this pod at all (its namespace and selectors). */
  readonly scope: { readonly watched: boolean; readonly detail: string };
  /** The mesh rule the pod falls under, or null with why no rule applies. */
  readonly rule: { readonly name: string | null; readonly detail: string };
  readonly validator: {
    readonly container: string;
    readonly state: TerminationView | "running" | "waiting" | "unknown" | "absent";
    readonly lastState: TerminationView | null;
    /** The kubelet's restartCount: the newest run's attempt number. */
    readonly restartCount: number;
  } | null;
  /** Istio's own repair as read from its settings (the istio rule defers to it); null when not read. */
  readonly istioRepair: string | null;
  readonly verdict: { readonly broken: boolean; readonly reason: string; readonly terminal: boolean };
  readonly agents: readonly AgentView[];
  /** The storm breaker's share on the pod's node and in the cluster, open or not. */
  readonly storm: { readonly node: string; readonly cluster: string };
  /** What each guard objects to now (absent: no objection). */
  readonly guards: GuardView;
  /** With --startup-taint: the pod's node's managed taints, what run would do with them and why. */
  readonly startupTaint?: StartupTaintRecord;
  /** What run does now in the configured mode. */
  readonly mode: Mode;
  readonly decision: DecisionView;
  /** What run would do in each mode. */
  readonly modes: Readonly<Record<Mode, DecisionView>>;
};

const MODES: readonly Mode[] = ["delete", "label", "report"];

export function explainPod(config: Config, query: PodQuery, facts: PodFacts, watched: boolean): Explanation {
  const nowMs = Date.now();
  // Each mode from a fresh copy of the paces: what run would do now, in that mode; nothing is spent or changed.
  const judged = (mode: Mode) => query.judge(facts, query.dryRun(), { mode });
  const now = judged(config.mode);
  const view = (decision: ReturnType<typeof judged>["decision"]): DecisionView => ({
    action: actionOf(decision),
    hold:
      decision.kind === "hold"
        ? {
            reason: decision.reason,
            detail: decision.detail,
            until: decision.retryAfterMs === undefined ? null : new Date(nowMs + decision.retryAfterMs).toISOString(),
          }
        : null,
    skip: decision.kind === "skip" ? decision.reason : null,
  });
  const rule = query.meshRule(facts);
  const verdict = now.verdict;
  return {
    pod: {
      namespace: facts.namespace,
      name: facts.name,
      uid: facts.uid,
      node: facts.nodeName ?? null,
      phase: facts.phase ?? null,
      owner: facts.owner ? { kind: facts.owner.kind, name: facts.owner.name } : null,
      staticPod: facts.staticPod,
      deleting: facts.deleting,
    },
    scope: {
      watched,
      detail: watched
        ? "run watches this pod"
        : "outside run's scope (--namespaces, --exclude-namespaces, --label-selector, --field-selector): run never sees it",
    },
    rule: rule ? { name: rule.name, detail: ruleDetail(rule) } : { name: null, detail: whyNoRule(facts, config.rules) },
    validator: validatorView(facts, rule),
    istioRepair: istioRepairOf(query),
    verdict: verdict.broken
      ? { broken: true, reason: verdict.reason, terminal: verdict.terminal }
      : {
          broken: false,
          reason: facts.deleting ? "already being deleted" : "no rule finds it broken",
          terminal: false,
        },
    agents: query.agents(facts, verdict.broken ? verdict.rule : rule?.name),
    storm: query.storm(facts.nodeName ?? ""),
    guards: now.guards,
    ...startupTaintOf(query, facts.nodeName),
    mode: config.mode,
    decision: view(now.decision),
    modes: Object.fromEntries(MODES.map((mode) => [mode, view(judged(mode).decision)])) as Record<Mode, DecisionView>,
  };
}

/** As scan shows it, by the kubelet's Ready time (a one-shot look); nothing without --startup-taint or a node. */
function startupTaintOf(query: PodQuery, node: string | undefined): { startupTaint?: StartupTaintRecord } {
  const view = node === undefined ? undefined : query.startupTaint(node);
  return view ? { startupTaint: startupTaintRecord(view) } : {};
}

const istioRepairOf = (query: PodQuery): string | null => {
  const state = query.istioRepair();
  return state === undefined ? null : describeIstioRepair(state);
};

const ruleDetail = (rule: Rule): string =>
  isAmbient(rule)
    ? "in Istio ambient scope (pod or namespace label)"
    : `carries the mesh's marker; validator init container ${rule.initContainer}`;

const markerText = (kind: string, marker: Marker): string =>
  `${kind} ${marker.key}${marker.value === undefined ? "" : `=${marker.value}`}`;

const lacks = (values: Readonly<Record<string, string>>, marker: Marker): boolean =>
  !Object.hasOwn(values, marker.key) || (marker.value !== undefined && values[marker.key] !== marker.value);

/** For each rule, the first thing the pod lacks: "istio: no annotation sidecar.istio.io/status; …". */
function whyNoRule(facts: PodFacts, rules: readonly Rule[]): string {
  return rules
    .map((rule) => {
      if (isAmbient(rule)) return `${rule.name}: not in ambient scope`;
      if (rule.requiredAnnotation && lacks(facts.annotations, rule.requiredAnnotation))
        return `${rule.name}: missing ${markerText("annotation", rule.requiredAnnotation)}`;
      if (rule.requiredLabel && lacks(facts.labels, rule.requiredLabel))
        return `${rule.name}: missing ${markerText("label", rule.requiredLabel)}`;
      return `${rule.name}: no init container ${rule.initContainer}`;
    })
    .join("; ");
}

function validatorView(facts: PodFacts, rule: Rule | undefined): Explanation["validator"] {
  if (rule === undefined || isAmbient(rule)) return null;
  const container = facts.initContainers.find((c) => c.name === rule.initContainer);
  return {
    container: rule.initContainer,
    state: container === undefined ? "absent" : stateView(container.state),
    lastState: container?.lastTermination === undefined ? null : terminationView(container.lastTermination),
    restartCount: container?.restartCount ?? 0,
  };
}

const terminationView = (t: Termination): TerminationView => ({
  exitCode: t.exitCode,
  reason: t.reason ?? null,
  startedAt: t.startedAtMs === undefined ? null : new Date(t.startedAtMs).toISOString(),
  finishedAt: t.finishedAtMs === undefined ? null : new Date(t.finishedAtMs).toISOString(),
});
const stateView = (state: ContainerState) => (typeof state === "string" ? state : terminationView(state));
