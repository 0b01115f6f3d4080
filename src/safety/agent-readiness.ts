// Every question asked about the node agents' readiness, answered in one place: the node-agent gate (may the rule's
// pods on a node be deleted yet?), whether an agent outage explains a pod's breakage (and so the outage pace), when
// the agents turned Ready (the ambient enrolment grace counts from there), when the CNI agent turned Ready by the
// kubelet's clock (Istio's repair fallback), and where a node's CNI agents stand (startup taints). Each rule once;
// "Ready long enough" itself is cni-agents.ts's.
import type { GraceStart } from "../detect/ambient.js";
import type { PodFacts } from "../detect/facts.js";
import type { CniAgents } from "../informer/cni-agent-pods.js";
import type { NodeAgentGate } from "../informer/node-agent-watcher.js";
import { type Clock, type Instant, instantOf, systemClock } from "../util/clock.js";
import { type ReadyBasis, type ReadyState, readyForMs, readyState, readyWaitMs } from "./cni-agents.js";
import type { GuardView } from "./policy.js";

/** How long after its CNI agent turned Ready (beyond --cni-agent-min-ready) a pod's breakage is still its fault. */
export const EXPLAINED_AFTER_READY_MS = 60_000;

/** Why a one-shot command may hold an agent Ready for long: it cannot vouch for a time the kubelet did not give. */
const CLAIMED_BASIS_NOTE =
  " (by the kubelet's Ready time; without one, or with one in the future, counted from this command's start)";

/** The gate's objection to deleting a pod on the node now: which agent, why, and (min-ready) how much longer. */
export type AgentObjection = NonNullable<GuardView["agent"]>;

export type AgentReadinessOptions = {
  /** The node-agent gates (CNI agent, ztunnel) each rule's deletions wait for; none when the gate is off. */
  readonly gatesByRule: ReadonlyMap<string, readonly NodeAgentGate[]>;
  /**
   * Which Ready time the gate and the enrolment grace count from (see cni-agents.ts). "observed" (run, the default):
   * the later of the kubelet's time and this process's first sight. "claimed" (the one-shot commands, which have no
   * sight of the past): the kubelet's time when it is a past time; a missing or future one still counts from this
   * process's first sight, so it holds.
   */
  readonly basis?: ReadyBasis;
  readonly clock?: Clock;
};

export class AgentReadiness {
  readonly #gatesByRule: AgentReadinessOptions["gatesByRule"];
  readonly #basis: ReadyBasis;
  readonly #clock: Clock;
  /** The CNI agent sets (not ztunnel's) any rule waits for, each once: what a node needs before its taint goes. */
  readonly #cniAgentSets: readonly CniAgents[];

  constructor(options: AgentReadinessOptions) {
    this.#gatesByRule = options.gatesByRule;
    this.#basis = options.basis ?? "observed";
    this.#clock = options.clock ?? systemClock;
    const sets = new Set<CniAgents>();
    for (const gates of options.gatesByRule.values()) for (const gate of cniGates(gates)) sets.add(gate.agents);
    this.#cniAgentSets = [...sets];
  }

  /** The gate: the first of the rule's node agents that objects to deleting a pod on the node now, if any. */
  gate(node: string, ruleName: string): AgentObjection | undefined {
    const now = instantOf(this.#clock);
    for (const gate of this.#gates(ruleName)) {
      const readyFor = readyForMs(gate.agents, node, now, this.#basis);
      if (readyFor === undefined) {
        // Loud when the selector finds no agent anywhere: a wrong selector must not hold pods in silence.
        const nowhere =
          gate.agents.count === 0
            ? ` (no ${gate.what} pod matches the selector anywhere: check ${gate.selectorFlag})`
            : "";
        return { reason: gate.reason, detail: `no Ready ${gate.what} pod on node ${node}${nowhere}` };
      }
      const waitMs = readyWaitMs(readyFor, gate.minReadyMs);
      if (waitMs === 0) continue;
      return {
        reason: gate.reason,
        waitMs,
        detail:
          `the ${gate.what} on node ${node} has been Ready for ${Math.round(readyFor / 1000)} s of the ${Math.round(gate.minReadyMs / 1000)} s required` +
          (this.#basis === "claimed" ? CLAIMED_BASIS_NOTE : ""),
      };
    }
    return undefined;
  }

  /**
   * Whether the pod's sandbox (or, without that fact, the pod) was set up before its node's CNI agent had been Ready
   * for --cni-agent-min-ready plus a minute, by the kubelet's time: the pods an outage broke. False when the pod's
   * times are unknown (fail-safe: unexplained, the cluster-wide pace); true while no agent is Ready (the gate holds
   * then); false without a gate. Judged from the pod's facts, not from the moment it is asked: the answer must not
   * depend on whether the pod was judged broken just before or just after the agent's window closed.
   */
  sandboxedDuringOutage(facts: PodFacts, ruleName: string): boolean {
    const sandboxAtMs = facts.sandboxSinceMs ?? facts.createdAtMs;
    if (sandboxAtMs === undefined) return false;
    return sandboxAtMs < this.#outageExplainsBeforeMs(facts.nodeName ?? "", ruleName, instantOf(this.#clock));
  }

  /**
   * When the last of the rule's node agents that are Ready on the node turned Ready (the ambient enrolment grace
   * counts from there: an agent that just started enrols the pods it finds). A gate with no Ready agent adds nothing:
   * it holds the pod itself, and names the missing agent.
   */
  graceStart(node: string, ruleName: string, basis: ReadyBasis = this.#basis): GraceStart | undefined {
    const now = instantOf(this.#clock);
    const by = basis === "observed" ? "seen by this controller" : "by the kubelet's time";
    let latest: GraceStart | undefined;
    for (const gate of this.#gates(ruleName)) {
      const readyFor = readyForMs(gate.agents, node, now, basis);
      if (readyFor === undefined) continue;
      // A wall time (detection compares it with the sandbox's), from a duration safe from wall-clock steps.
      const atMs = now.wallMs - readyFor;
      if (latest !== undefined && atMs <= latest.atMs) continue;
      latest = { atMs, cause: `${gate.what} on node ${node} turned Ready (${by})` };
    }
    return latest;
  }

  /**
   * For Istio's repair fallback: when the rule's CNI agent on the node turned Ready by the kubelet's time (the clock
   * the validator's finish time is on; undefined: none Ready), and its --cni-agent-min-ready (0 without a gate).
   */
  cniAgentReadySince(
    node: string,
    ruleName: string,
  ): { readonly atMs: number | undefined; readonly minReadyMs: number } {
    const gate = cniGates(this.#gates(ruleName))[0];
    if (gate === undefined) return { atMs: undefined, minReadyMs: 0 };
    const now = instantOf(this.#clock);
    const readyFor = readyForMs(gate.agents, node, now, "claimed");
    return { atMs: readyFor === undefined ? undefined : now.wallMs - readyFor, minReadyMs: gate.minReadyMs };
  }

  /**
   * Where the node's CNI agents stand, for its startup taint: every set Ready (for as long as the shortest-Ready one
   * has been), one there but not Ready, or one missing. `basis`: "observed" to act, "claimed" for a one-shot look.
   */
  cniAgentsOn(node: string, basis: ReadyBasis = "observed", now: Instant = instantOf(this.#clock)): ReadyState {
    let shortest = Number.POSITIVE_INFINITY;
    let absent = this.#cniAgentSets.length === 0;
    for (const agents of this.#cniAgentSets) {
      const state = readyState(agents, node, now, basis);
      if (state.kind === "not_ready") return state;
      if (state.kind === "absent") absent = true;
      else shortest = Math.min(shortest, state.forMs);
    }
    return absent ? { kind: "absent" } : { kind: "ready", forMs: shortest };
  }

  /**
   * The one "an agent outage explains this breakage" rule: breakage of a pod on the node set up before this wall
   * time is the outage's (+Infinity while a CNI agent of the rule is not Ready there; -Infinity without a gate).
   * That is until the agent has been Ready, by the kubelet's time, for --cni-agent-min-ready plus a minute.
   */
  #outageExplainsBeforeMs(node: string, ruleName: string, now: Instant): number {
    let before = Number.NEGATIVE_INFINITY;
    for (const gate of cniGates(this.#gates(ruleName))) {
      const readyFor = readyForMs(gate.agents, node, now, "claimed");
      if (readyFor === undefined) return Number.POSITIVE_INFINITY;
      before = Math.max(before, now.wallMs - readyFor + gate.minReadyMs + EXPLAINED_AFTER_READY_MS);
    }
    return before;
  }

  #gates(ruleName: string): readonly NodeAgentGate[] {
    return this.#gatesByRule.get(ruleName) ?? [];
  }
}

/** The CNI agent gates among a rule's gates (ztunnel's are not: an outage of the CNI agent is what breaks pods). */
const cniGates = (gates: readonly NodeAgentGate[]): readonly NodeAgentGate[] =>
  gates.filter((gate) => gate.reason === "cni_agent_not_ready");
