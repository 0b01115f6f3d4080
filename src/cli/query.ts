// The read-only questions scan and explain ask of the caches: which pods there are, what run would decide about one
// (through the same judgement, on a copy of the paces: nothing is spent or written), the node agents a rule waits
// for on a node, the storm breaker's shares, the managed startup taints and Istio's own repair. Detection goes by the
// pod's and the kubelet's own times: a one-shot look has no memory of when a pod entered ambient scope.
import type { Config, Mode } from "../config/config.js";
import { type DetectContext, detect, meshRule, type Verdict } from "../detect/detect.js";
import type { PodFacts } from "../detect/facts.js";
import type { IstioRepairState } from "../detect/istio-repair-settings.js";
import type { Rule } from "../detect/rule.js";
import type { NodeAgentGate } from "../informer/node-agent-watcher.js";
import type { NodeTaintView, TaintJudge } from "../prevent/taint-judge.js";
import type { ReadyBasis } from "../safety/cni-agents.js";
import type { DryRun, Judgement, Safety } from "../safety/safety.js";
import { type Clock, systemClock, wallTimeOf } from "../util/clock.js";

export type QuerySources = {
  readonly pods: {
    readonly size: number;
    get(key: string): PodFacts | undefined;
    values(): IterableIterator<PodFacts>;
  };
  readonly safety: Safety;
  /** The node-agent gates each rule's deletions wait for. */
  readonly agentGates: ReadonlyMap<string, readonly NodeAgentGate[]>;
  /** Startup-taint management, when --startup-taint is on. */
  readonly startupTaints: Pick<TaintJudge, "view" | "views"> | undefined;
  /** The clock and namespace labels, as detection needs them now. */
  readonly context: () => DetectContext;
  /** What is known of Istio's own repair now; undefined when not read (--istio-repair=ignore, no istio rule). */
  readonly istioRepair: (() => IstioRepairState) | undefined;
  /** Shows this process's own (monotonic) sightings as wall times. */
  readonly clock?: Clock | undefined;
};

/** One node agent a rule's deletions wait for, on the pod's node. */
export type AgentView = {
  readonly what: string;
  readonly node: string;
  readonly pod: string;
  readonly ready: boolean;
  /** When its Ready condition turned True by the kubelet, and when this process first saw it Ready. */
  readonly readySince: string | null;
  readonly seenReadySince: string | null;
  readonly minReadySeconds: number;
};

export class PodQuery {
  readonly #config: Config;
  readonly #sources: QuerySources;

  constructor(config: Config, sources: QuerySources) {
    this.#config = config;
    this.#sources = sources;
  }

  get size(): number {
    return this.#sources.pods.size;
  }

  pod(key: string): PodFacts | undefined {
    return this.#sources.pods.get(key);
  }

  pods(): IterableIterator<PodFacts> {
    return this.#sources.pods.values();
  }

  /** Detection as a one-shot look sees it. */
  verdict(facts: PodFacts): Verdict {
    return detect(facts, this.#config.rules, this.#context());
  }

  /** The mesh rule the pod falls under, broken or not. */
  meshRule(facts: PodFacts): Rule | undefined {
    return meshRule(facts, this.#config.rules, this.#context());
  }

  /** A copy of the deletion paces to judge against: judging in order spends from it, never from the real ones. */
  dryRun(): DryRun {
    return this.#sources.safety.dryRun();
  }

  /** What run would decide about the pod now, through the safety object's one judgement, dry. */
  judge(facts: PodFacts, dry: DryRun, options: { mode?: Mode } = {}): Judgement {
    return this.#sources.safety.judge(facts, this.verdict(facts), { dry, ...options });
  }

  /** The node agents the rule's deletions wait for, on the pod's node. */
  agents(facts: PodFacts, ruleName: string | undefined): AgentView[] {
    const node = facts.nodeName ?? "";
    const iso = (ms: number | undefined) =>
      ms === undefined || !Number.isFinite(ms) ? null : new Date(ms).toISOString();
    return (this.#sources.agentGates.get(ruleName ?? "") ?? []).flatMap((gate) =>
      [...gate.agents.store.values()]
        .filter((agent) => agent.nodeName === node)
        .map((agent) => ({
          what: gate.what,
          node,
          pod: `${agent.namespace}/${agent.name}`,
          ready: agent.readySinceMs !== undefined,
          readySince: iso(agent.readySinceMs),
          seenReadySince: iso(
            agent.seenReadyAtMs === undefined
              ? undefined
              : wallTimeOf(this.#sources.clock ?? systemClock, agent.seenReadyAtMs),
          ),
          minReadySeconds: gate.minReadyMs / 1000,
        })),
    );
  }

  /** The storm breaker's share on the node and in the cluster, open or not. */
  storm(node: string): { readonly node: string; readonly cluster: string } {
    const { storm } = this.#sources.safety;
    return { node: storm.describe("node", node), cluster: storm.describe("cluster", "") };
  }

  /**
   * The node's managed startup taints and what run would do with them: by the kubelet's Ready time for a one-shot
   * look (the default), or by the Ready time this process observed.
   */
  startupTaint(node: string, basis: ReadyBasis = "claimed"): NodeTaintView | undefined {
    return this.#sources.startupTaints?.view(node, basis);
  }

  /** Every node with a managed taint or something to do about one; undefined without --startup-taint. */
  startupTaints(): NodeTaintView[] | undefined {
    return this.#sources.startupTaints?.views("claimed");
  }

  /** What is known of Istio's own repair; undefined when not read. */
  istioRepair(): IstioRepairState | undefined {
    return this.#sources.istioRepair?.();
  }

  /** No memory of when a pod entered ambient scope: the pod's and the kubelet's own times. */
  #context(): DetectContext {
    return { ...this.#sources.context(), seenUnenrolledSince: undefined };
  }
}
