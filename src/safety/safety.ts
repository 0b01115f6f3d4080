// The safety object: the whole of what run, scan and explain ask before touching a pod. Two calls and their
// tickets — judge(pod) → { decision, ticket }, then ticket.settle(outcome) or ticket.release() — and, from the
// cache side, observe(change). It owns the deletion pace (turns spent and reserved), the in-flight slots, the storm
// accounting, the throttle gate, the holds, the pods already acted on, and the events that may free a held pod
// (wakeups.ts says which). The order of the guards is policy.ts's alone.
import type { Mode } from "../config/config.js";
import { type DetectContext, detect, meshRule, type Verdict } from "../detect/detect.js";
import { type PodFacts, podKey } from "../detect/facts.js";
import type { Rule } from "../detect/rule.js";
import type { PodChange } from "../informer/pod-store.js";
import type { Metrics } from "../observe/metrics.js";
import { systemClock } from "../util/clock.js";
import { GuardEvents } from "./guard-events.js";
import { type GuardOptions, type GuardsSnapshot, type Paces, SafetyGuards } from "./guards.js";
import type { HoldReason } from "./hold-reasons.js";
import { Holds } from "./holds.js";
import { type Decision, decide, type GuardView, isPaced, keepsTurn, modeFor } from "./policy.js";
import type { PodStanding, StormView } from "./storm-breaker.js";
import { ThrottleGate } from "./throttle-gate.js";
import { type ActionOutcome, Ticket, type TicketOwner } from "./ticket.js";

export type SafetyOptions = Omit<GuardOptions, "onTurnMoved" | "onStormTransition"> & {
  readonly rules: readonly Rule[];
  /** The configured mode; a rule may narrow it (modeFor: ambient rules report in delete mode). */
  readonly mode: Mode;
  readonly label: { readonly key: string; readonly value: string };
  readonly deleteBarePods: boolean;
  /** Where the holds are counted (cni_repair_pods_held, cni_repair_holds_total). */
  readonly metrics: Pick<Metrics, "podsHeld" | "holdsTotal" | "podsHeldLongestSeconds">;
  /** Detection's context now, for the cache side (which pods are meshed and broken). */
  readonly context: () => DetectContext;
};

export type JudgeOptions = {
  /**
   * When this controller first saw the pod broken, on the monotonic clock (the loop backoff tells a replacement
   * from a sibling by it).
   */
  readonly seenBrokenSinceMs?: number;
  /** Judge as if run in this mode (explain shows every mode). */
  readonly mode?: Mode;
  /** A dry judgement (scan, explain): spends only this run's copy of the paces, and changes nothing else. */
  readonly dry?: DryRun;
};

/** A series of dry judgements, in order: the deletion paces they spend from are a copy of the real ones. */
export type DryRun = { readonly paces: Paces };

export type Judgement = {
  readonly verdict: Verdict;
  /** The action `run` takes for this pod's rule in the mode (ambient rules report in delete mode); undefined: healthy. */
  readonly mode: Mode | undefined;
  readonly guards: GuardView;
  readonly decision: Decision;
  /** Close it: settle(outcome) after acting, release() otherwise. */
  readonly ticket: Ticket;
  /** A hold new for this pod UID (a new reason, or newly held): say so once (log line, Event). */
  readonly heldAnew: boolean;
};

/** Safety.snapshot's answer. */
export type SafetySnapshot = {
  readonly guards: GuardsSnapshot;
  readonly holds: ReturnType<Holds["snapshot"]>;
  readonly handled: readonly (readonly [string, string])[];
  readonly throttle: ReturnType<ThrottleGate["snapshot"]>;
  readonly openTickets: number;
};

export class Safety {
  readonly #guards: SafetyGuards;
  readonly #holds: Holds;
  readonly #events = new GuardEvents();
  readonly #throttle: ThrottleGate;
  readonly #options: SafetyOptions;
  /** Pod key → UID this controller already deleted or reported, so it never acts on that UID twice. */
  readonly #handled = new Map<string, string>();
  readonly #open = new Set<Ticket>();
  readonly #owner: TicketOwner = {
    afterAction: (facts, decision, outcome) => this.#afterAction(facts, decision, outcome),
    closed: (ticket) => this.#open.delete(ticket),
  };

  constructor(options: SafetyOptions) {
    this.#options = options;
    this.#guards = new SafetyGuards({ ...options, ...this.#events.hooks });
    const clock = options.clock ?? systemClock;
    this.#holds = new Holds(options.metrics.podsHeld, options.metrics.holdsTotal, {
      longest: options.metrics.podsHeldLongestSeconds,
      monotonicMs: () => clock.monotonic(),
    });
    this.#throttle = new ThrottleGate(() => clock.monotonic());
  }

  /** What may free a held pod (slot freed, storm opened or closed, a turn moved): the triggers listen here. */
  get events(): GuardEvents {
    return this.#events;
  }

  /** Who is held and why (read them; only judge, release and observe change them). */
  get holds(): Pick<Holds, "keys"> {
    return this.#holds;
  }

  /** The storm breaker's counts and shares (read them; only judge, its tickets and observe change them). */
  get storm(): StormView {
    return this.#guards.storm;
  }

  /**
   * Every piece of state a judgement may change, as plain data, read-only: the guards (paces, in-flight slots, loop
   * records, storm counts), the holds, the pods acted on, the throttle and the open tickets. Tests compare it
   * before and after a dry judgement, which must change none of it.
   */
  snapshot(): SafetySnapshot {
    return {
      guards: this.#guards.snapshot(),
      holds: this.#holds.snapshot(),
      handled: [...this.#handled],
      throttle: this.#throttle.snapshot(),
      openTickets: this.#open.size,
    };
  }

  /** Tickets judged and not yet settled or released (0 whenever no reconcile is under way). */
  get openTickets(): number {
    return this.#open.size;
  }

  /**
   * What to do with the pod now, and, unless dry, everything the decision reserves, in this same tick (no await
   * between the guards' view and the reservation): a delete spends its turn and takes its in-flight slot, a rate_limit
   * hold reserves its turn, any other hold or action gives a reserved turn back; the hold is recorded.
   */
  judge(facts: PodFacts, verdict: Verdict, options: JudgeOptions = {}): Judgement {
    const key = podKey(facts.namespace, facts.name);
    const dry = options.dry;
    if (!verdict.broken) {
      if (!dry) {
        const waitedForSlot = this.#waitsForSlot(key);
        this.#release(key);
        this.#leftLine(key, waitedForSlot);
      }
      const decision: Decision = { kind: "healthy" };
      return {
        verdict,
        mode: undefined,
        guards: {},
        decision,
        ticket: this.#ticket(key, facts, decision, dry),
        heldAnew: false,
      };
    }
    const { rules, label, deleteBarePods } = this.#options;
    const mode = modeFor(options.mode ?? this.#options.mode, rules, verdict.rule);
    const guards = this.#guards.view(facts, verdict.rule, {
      ...(options.seenBrokenSinceMs !== undefined && { seenBrokenSinceMs: options.seenBrokenSinceMs }),
      ...(dry && { paces: dry.paces, dry: true }),
    });
    const decision = decide({
      facts,
      verdict,
      mode,
      label,
      alreadyHandled: !dry && this.#handled.get(key) === facts.uid,
      deleteBarePods,
      guards,
      throttledMs: dry ? 0 : this.#throttle.waitMs(key),
    });
    if (isPaced(decision)) this.#guards.commitPace(key, guards, dry?.paces);
    const ticket = this.#ticket(key, facts, decision, dry);
    if (dry) return { verdict, mode, guards, decision, ticket, heldAnew: false };
    const waitedForSlot = this.#waitsForSlot(key);
    let heldAnew = false;
    if (decision.kind === "hold") {
      if (!keepsTurn(decision)) this.#guards.forgetPod(key);
      heldAnew = this.#holds.hold(key, facts, decision.reason);
    } else {
      this.#release(key);
      // From here on the DELETE may be in flight: its slot is taken before any await, so workers cannot overshoot.
      if (decision.kind === "act" && decision.action === "delete") this.#guards.beforeDelete(facts);
    }
    this.#leftLine(key, waitedForSlot);
    return { verdict, mode, guards, decision, ticket, heldAnew };
  }

  /** A fresh copy of the deletion paces for a series of dry judgements (scan's pass, one explain mode). */
  dryRun(): DryRun {
    return { paces: this.#guards.dryPaces() };
  }

  /**
   * The cache side, for every pod change: each pod's standing for the storm breaker (meshed, broken, explained by its
   * node's agent), the in-flight slot of a deleted pod now gone, and a gone pod's holds, turn and throttle.
   * `currentVerdict`: detection's verdict on `change.current`, when the caller has it.
   */
  observe({ key, previous, current }: PodChange, currentVerdict?: Verdict): void {
    const context = this.#options.context();
    const rules = this.#options.rules;
    // The cache may have detected the current pod already (once per change); otherwise it is detected here.
    const verdict = current && (currentVerdict ?? detect(current, rules, context));
    // The previous pod as the breaker recorded it (its update reads only whether it was meshed): not detected again.
    const before = previous && this.#standing(previous, this.#guards.storm.isBroken(previous.uid), context);
    const now = current && this.#standing(current, verdict?.broken === true, context);
    const explained =
      current !== undefined &&
      verdict?.broken === true &&
      this.#options.readiness.sandboxedDuringOutage(current, verdict.rule);
    this.#guards.standingChanged(
      before && previous && { facts: previous, standing: before },
      now && current && { facts: current, standing: { ...now, explained } },
    );
    const waitedForSlot = this.#waitsForSlot(key);
    if (previous && previous.uid !== current?.uid) {
      const freed = this.#guards.podGone(previous.uid);
      if (freed) this.#slotsOpen(freed);
    }
    if (current === undefined) this.#forget(key);
    this.#leftLine(key, waitedForSlot);
  }

  /** The in-flight slot the pod waits for (held node_inflight or namespace_inflight), if it does. */
  #waitsForSlot(key: string): { reason: HoldReason; node: string; namespace: string } | undefined {
    const held = this.#holds.get(key);
    return held?.reason === "node_inflight" || held?.reason === "namespace_inflight" ? held : undefined;
  }

  /**
   * A pod that waited for a slot and waits for it no more (it took one, is held for another reason, healed or is
   * gone): the next in line may take the slot it was woken for.
   */
  #leftLine(key: string, waited: { reason: HoldReason; node: string; namespace: string } | undefined): void {
    if (waited && this.#waitsForSlot(key)?.reason !== waited.reason) this.#slotsOpen(waited);
  }

  /** The node and namespace may take more deletions now: the pods waiting there, as many as fit, are woken. */
  #slotsOpen(where: { node: string; namespace: string }): void {
    const { node, namespace } = where;
    this.#events.publish({ kind: "slot_freed", node, namespace, free: this.#guards.freeSlots(where) });
  }

  /** A new leadership term starts with no burst: the previous leader may have spent it a moment ago. */
  startTerm(): void {
    this.#guards.startTerm();
  }

  #ticket(key: string, facts: PodFacts, decision: Decision, dry: DryRun | undefined): Ticket {
    const ticket = new Ticket(key, facts, decision, dry ? undefined : this.#owner);
    if (!dry) this.#open.add(ticket);
    return ticket;
  }

  #afterAction(facts: PodFacts, decision: Extract<Decision, { kind: "act" }>, outcome: ActionOutcome): void {
    const key = podKey(facts.namespace, facts.name);
    if (decision.action === "delete") {
      // A 429/503 refused the DELETE before doing anything: like a skip, nothing was deleted.
      const refused = outcome.result === "skip" || outcome.result === "throttled";
      const freed = this.#guards.afterDelete(
        facts,
        outcome.result === "success" ? "deleted" : refused ? "skipped" : "failed",
      );
      if (freed) this.#slotsOpen(freed);
    }
    if ((outcome.result === "success" || outcome.result === "dry_run") && decision.action !== "label") {
      this.#handled.set(key, facts.uid);
    }
    if (outcome.result === "throttled" && outcome.retryAfterMs !== undefined) {
      // Not a failure: nothing calls for this pod before the server asked (judge holds it as throttled till then).
      this.#throttle.hold(key, outcome.retryAfterMs);
      this.#holds.hold(key, facts, "throttled");
    }
  }

  /** The pod is no longer held (acted on, healed, or gone) and waits for no deletion turn. */
  #release(key: string): void {
    this.#holds.release(key);
    this.#guards.forgetPod(key);
  }

  #forget(key: string): void {
    this.#release(key);
    this.#throttle.forget(key);
    this.#handled.delete(key);
  }

  /** How the pod counts for the storm breaker: only alive, unfinished, meshed pods count at all. */
  #standing(facts: PodFacts, broken: boolean, context: DetectContext): PodStanding | undefined {
    if (facts.deleting || facts.phase === "Failed" || facts.phase === "Succeeded") return undefined;
    if (!meshRule(facts, this.#options.rules, context)) return undefined;
    return { meshed: true, broken };
  }
}
