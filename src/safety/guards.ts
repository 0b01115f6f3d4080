// One job: the stateful guards' view of a broken pod now (the GuardView decide orders) and their bookkeeping around
// each delete (paces, in-flight slots, loop records, storm counts and its expiry timer). What the node agents' readiness
// says is asked of agent-readiness.ts.

import { type PodFacts, podKey } from "../detect/facts.js";
import type { IstioRepairState } from "../detect/istio-repair-settings.js";
import { type Clock, systemClock, type TimerHandle } from "../util/clock.js";
import type { AgentReadiness } from "./agent-readiness.js";
import { type FreeSlots, InflightDeletions } from "./inflight-deletions.js";
import { LoopBackoff } from "./loop-backoff.js";
import { meshRepairCheck } from "./mesh-repair-guard.js";
import type { GuardView } from "./policy.js";
import { type PodStanding, StormBreaker, type StormSnapshot, type StormTransition } from "./storm-breaker.js";
import { TokenBucket, type TokenBucketSnapshot } from "./token-bucket.js";

export type GuardOptions = {
  readonly limits: {
    readonly deletionsPerMinute: number;
    /** The pace of repairs after a CNI agent outage (see view()); the same burst. */
    readonly outageDeletionsPerMinute: number;
    readonly deletionBurst: number;
    readonly inflightPerNode: number;
    readonly inflightPerNamespace: number;
  };
  readonly loopBackoff: { readonly baseMs: number; readonly maxMs: number };
  readonly storm: { readonly maxBrokenFraction: number; readonly minBroken: number; readonly windowMs?: number };
  /** Every question about the node agents' readiness (the gate, the outage, Istio's fallback) is asked of it. */
  readonly readiness: AgentReadiness;
  /** Istio's own repair, for the rule it applies to (istio); absent with --istio-repair=ignore. */
  readonly istioRepair?: IstioRepairGuard;
  /** A storm breaker opened or closed (from a cache change, a delete, or the window passing). */
  readonly onStormTransition?: (transition: StormTransition) => void;
  /** Pods whose reserved deletion turn came earlier (a refunded token): wake them then. */
  readonly onTurnMoved?: (key: string, waitMs: number) => void;
  readonly clock?: Clock;
};

/** The deletion pace a view peeks at: the real one, or scan's copy. */
export type Pace = Pick<TokenBucket, "peek" | "take">;

/** The guards' state as plain data (SafetyGuards.snapshot). */
export type GuardsSnapshot = {
  readonly paces: { readonly cluster: TokenBucketSnapshot; readonly outage: TokenBucketSnapshot };
  readonly inflight: ReturnType<InflightDeletions["snapshot"]>;
  readonly loop: ReturnType<LoopBackoff["snapshot"]>;
  readonly storm: StormSnapshot;
  readonly expiryAtMs: number | undefined;
};

/** The two paces: every repair's, and the faster one of repairs after a CNI agent outage. */
export type Paces = { readonly cluster: Pace; readonly outage: Pace };

/** Which rule's pods Istio's own repair covers, its validator, and what is known of Istio's settings now. */
export type IstioRepairGuard = {
  readonly rule: string;
  readonly validator: string;
  readonly state: () => IstioRepairState;
};

export class SafetyGuards {
  readonly storm: StormBreaker;
  readonly #tokens: { readonly cluster: TokenBucket; readonly outage: TokenBucket };
  readonly #inflight: InflightDeletions;
  readonly #loop: LoopBackoff;
  readonly #readiness: AgentReadiness;
  readonly #istioRepair: IstioRepairGuard | undefined;
  readonly #onTurnMoved: GuardOptions["onTurnMoved"];
  readonly #onStormTransition: GuardOptions["onStormTransition"];
  readonly #clock: Clock;
  /** The timer that lets the storm breaker's slots go when the next one is due (no polling while none is). */
  #expiry: { readonly atMs: number; readonly timer: TimerHandle } | undefined;

  constructor(options: GuardOptions) {
    this.#clock = options.clock ?? systemClock;
    const bucket = (ratePerMinute: number) =>
      new TokenBucket({ ratePerMinute, burst: options.limits.deletionBurst, clock: this.#clock });
    this.#tokens = {
      cluster: bucket(options.limits.deletionsPerMinute),
      outage: bucket(options.limits.outageDeletionsPerMinute),
    };
    this.#inflight = new InflightDeletions({
      perNode: options.limits.inflightPerNode,
      perNamespace: options.limits.inflightPerNamespace,
    });
    this.#loop = new LoopBackoff({ ...options.loopBackoff, clock: this.#clock });
    this.storm = new StormBreaker({ ...options.storm, clock: this.#clock });
    this.#readiness = options.readiness;
    this.#istioRepair = options.istioRepair;
    this.#onTurnMoved = options.onTurnMoved;
    this.#onStormTransition = options.onStormTransition;
  }

  /**
   * What each guard says about deleting this pod, broken under the named rule, right now. The pace is only
   * peeked at: commitPace() spends (or reserves) the turn once the policy has decided.
   */
  view(
    facts: PodFacts,
    ruleName: string,
    options: { seenBrokenSinceMs?: number; paces?: Paces; dry?: boolean } = {},
  ): GuardView {
    const loop = this.#loop.check(facts, options.seenBrokenSinceMs, options.dry);
    // The one place that says which pace a pod is under: the outage pace when an agent outage explains its
    // breakage (the storm breaker's judgement when it broke), unless it replaces a pod we deleted (a repeat is
    // no outage's fault) or its sandbox was set up after its node's agent had long been Ready (the storm breaker's
    // judgement can be made before the agent cache has listed, as in a one-shot scan); every other pod, the
    // cluster-wide pace. docs/operations.md argues why.
    const outage =
      loop === undefined && this.storm.explained(facts.uid) && this.#readiness.sandboxedDuringOutage(facts, ruleName);
    const paces = options.paces ?? this.#tokens;
    const waitMs = paces[outage ? "outage" : "cluster"].peek(podKey(facts.namespace, facts.name));
    const stormScope = this.storm.openFor(facts);
    const agent = this.#readiness.gate(facts.nodeName ?? "", ruleName);
    const inflight = this.#inflight.blockedBy(facts);
    const mesh = this.#meshRepair(facts, ruleName);
    return {
      ...(mesh?.kind === "hold" && { meshRepair: mesh }),
      ...(mesh?.kind === "fallback" && { meshFallback: { basis: mesh.basis, detail: mesh.detail } }),
      ...(loop && {
        loop: {
          waitMs: loop.waitMs,
          detail:
            `replacement came back broken ${Math.round(loop.lastDeletionAgoMs / 1000)} s after our delete #${loop.deletions} ` +
            `of this owner's pod on node ${facts.nodeName}; next delete in ${Math.ceil(loop.waitMs / 1000)} s`,
        },
      }),
      ...(stormScope && { storm: { detail: this.storm.describe(stormScope, facts.nodeName ?? "") } }),
      ...(agent && { agent }),
      ...(inflight && {
        inflight: {
          reason: inflight,
          detail:
            inflight === "node_inflight"
              ? `too many pods deleted by us are still terminating on node ${facts.nodeName}`
              : `too many pods deleted by us are still terminating in namespace ${facts.namespace}`,
        },
      }),
      ...(outage && {
        outage: {
          detail: `broke during the CNI agent outage on node ${facts.nodeName}: paced by --max-outage-deletions-per-minute`,
        },
      }),
      ...(waitMs > 0 && {
        pace: {
          waitMs,
          detail: `deletions are paced by ${outage ? "--max-outage-deletions-per-minute" : "--max-deletions-per-minute"}; this pod's turn is in ${Math.ceil(waitMs / 1000)} s`,
        },
      }),
    };
  }

  /**
   * Carries out the pace part of a decision: a delete spends its token, a rate_limit hold reserves its turn
   * (so held pods wake once, in order). Returns the wait, 0 for a delete.
   */
  commitPace(key: string, view: GuardView = {}, paces: Paces = this.#tokens): number {
    return paces[view.outage ? "outage" : "cluster"].take(key);
  }

  /** A copy of the paces for `scan`: it answers what run would do, in order, without spending real tokens. */
  dryPaces(): Paces {
    return { cluster: this.#tokens.cluster.copy(), outage: this.#tokens.outage.copy() };
  }

  /** A new leadership term starts with no burst: the previous leader may have spent it a moment ago. */
  startTerm(): void {
    for (const bucket of this.#buckets()) bucket.empty();
  }

  /** The pod no longer waits for a deletion slot (healed, gone, or acted on otherwise). */
  forgetPod(key: string): void {
    for (const bucket of this.#buckets()) bucket.cancel(key);
  }

  /** Call right before sending the DELETE: takes the in-flight slot so concurrent workers cannot overshoot. */
  beforeDelete(facts: PodFacts): void {
    this.#inflight.reserve(facts);
    // From now on the pod counts as broken for the breaker whatever the watch says next.
    this.#storm(this.storm.deleting(facts));
  }

  /**
   * Call with the DELETE's outcome. A delete that did not happen frees its in-flight slot at once (returned, if it
   * had one); a skip (404, 409: nothing was deleted by us) also gives its token back, and pods waiting for a turn
   * move up.
   */
  afterDelete(
    facts: PodFacts,
    outcome: "deleted" | "skipped" | "failed",
  ): { node: string; namespace: string } | undefined {
    const key = podKey(facts.namespace, facts.name);
    this.#storm(this.storm.deleted(facts.uid, outcome !== "skipped"));
    if (outcome === "deleted") {
      this.#loop.recordDeletion(facts);
      for (const bucket of this.#buckets()) bucket.settle(key);
      return undefined;
    }
    const freed = this.#inflight.release(facts.uid);
    // A failed DELETE may still have reached the server (a timeout): its token stays spent, the safe side.
    if (outcome === "failed") {
      for (const bucket of this.#buckets()) bucket.settle(key);
      return freed;
    }
    // The token came from one of the two paces; the other has nothing spent for the key and moves nothing.
    for (const bucket of this.#buckets()) {
      for (const [moved, waitMs] of bucket.refund(key)) this.#onTurnMoved?.(moved, waitMs);
    }
    return freed;
  }

  /** The in-flight deletions the node and the namespace each take now (Infinity without a cap). */
  freeSlots(where: { node: string; namespace: string }): FreeSlots {
    return this.#inflight.free(where);
  }

  /** A pod UID left the cache: its in-flight slot (if we deleted it) is free. Returns where, if it was. */
  podGone(uid: string): { node: string; namespace: string } | undefined {
    return this.#inflight.release(uid);
  }

  /** Keeps the storm breaker's counts in step with the cache; returns (and reports) what opened or closed. */
  standingChanged(
    previous: { facts: PodFacts; standing: PodStanding } | undefined,
    current: { facts: PodFacts; standing: PodStanding } | undefined,
  ): readonly StormTransition[] {
    return this.#storm(this.storm.update(previous, current));
  }

  /**
   * Lets the storm breaker forget our deletes older than its window. Its own timer calls this when the next is due
   * (unref'd: it never keeps the process running); a window passes with time alone, so it may close the breaker.
   */
  expire(): void {
    this.#storm(this.storm.expire());
  }

  /** Every guard's state as plain data, read-only (tests compare it before and after a dry judgement). */
  snapshot(): GuardsSnapshot {
    return {
      paces: { cluster: this.#tokens.cluster.snapshot(), outage: this.#tokens.outage.snapshot() },
      inflight: this.#inflight.snapshot(),
      loop: this.#loop.snapshot(),
      storm: this.storm.snapshot(),
      expiryAtMs: this.#expiry?.atMs,
    };
  }

  #buckets(): readonly TokenBucket[] {
    return [this.#tokens.cluster, this.#tokens.outage];
  }

  #storm(transitions: readonly StormTransition[]): readonly StormTransition[] {
    for (const transition of transitions) this.#onStormTransition?.(transition);
    this.#scheduleExpiry();
    return transitions;
  }

  /**
   * Istio's own repair of this pod, if its rule is Istio's. The agent's Ready time is the kubelet's ("claimed"), the
   * clock the validator's finish time is on; the gate itself (observed) still holds a pod until then.
   */
  #meshRepair(facts: PodFacts, ruleName: string): ReturnType<typeof meshRepairCheck> {
    const istio = this.#istioRepair;
    if (istio === undefined || istio.rule !== ruleName) return undefined;
    const agent = this.#readiness.cniAgentReadySince(facts.nodeName ?? "", ruleName);
    return meshRepairCheck({
      istio: istio.state(),
      facts,
      validator: istio.validator,
      agentReadySinceMs: agent.atMs,
      minReadyMs: agent.minReadyMs,
      nowMs: this.#clock.now(),
    });
  }

  /** After every breaker change: the timer fires when the earliest slot is due, and not at all while none is. */
  #scheduleExpiry(): void {
    const next = this.storm.nextExpiryAtMs();
    if (next === this.#expiry?.atMs) return;
    if (this.#expiry) this.#clock.clearTimeout(this.#expiry.timer);
    this.#expiry = undefined;
    if (next === undefined) return;
    const timer = this.#clock.setTimeout(
      () => {
        this.#expiry = undefined;
        this.expire();
      },
      Math.max(0, next - this.#clock.monotonic()),
      { unref: true },
    );
    this.#expiry = { atMs: next, timer };
  }
}
