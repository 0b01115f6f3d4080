// What a judgement reserved, and the one way to close it: settle (the action was carried out: its outcome) or release
// (it was not acted on). Safety.judge makes every reservation in the same tick as the decision; a ticket only says
// how it ended, once.
import type { PodFacts } from "../detect/facts.js";
import { type Decision, keepsTurn } from "./policy.js";

/** How an action ended: the repairer's result (throttled: the server answered 429/503 with Retry-After). */
export type ActionOutcome = {
  readonly result: "success" | "dry_run" | "skip" | "fail" | "throttled";
  readonly retryAfterMs?: number;
};

/** What the caller is to do next about the pod, as the safety sees it. */
export type Advice = {
  /** Look at the pod again then (a hold's wait, or the server's Retry-After). */
  readonly requeueAfterMs?: number;
  /** The wait is not a failure of the pod's own: its retry count carries over (a pod waiting for its turn). */
  readonly keepFailures?: boolean;
};

/** The side of Safety a ticket closes into. */
export type TicketOwner = {
  afterAction(facts: PodFacts, decision: Extract<Decision, { kind: "act" }>, outcome: ActionOutcome): void;
  closed(ticket: Ticket): void;
};

export class Ticket {
  readonly key: string;
  readonly facts: PodFacts;
  readonly decision: Decision;
  readonly #owner: TicketOwner | undefined;
  #open = true;

  /** owner undefined: a dry judgement's ticket, which reserved nothing. */
  constructor(key: string, facts: PodFacts, decision: Decision, owner: TicketOwner | undefined) {
    this.key = key;
    this.facts = facts;
    this.decision = decision;
    this.#owner = owner;
  }

  get open(): boolean {
    return this.#open;
  }

  /** The decided action was carried out with this outcome. Only for an `act` decision. */
  settle(outcome: ActionOutcome): Advice {
    const decision = this.decision;
    if (decision.kind !== "act") throw new Error(`settle: the decision was ${decision.kind}, not act`);
    this.#close(() => this.#owner?.afterAction(this.facts, decision, outcome));
    if (outcome.result === "throttled" && outcome.retryAfterMs !== undefined) {
      return { requeueAfterMs: outcome.retryAfterMs };
    }
    return {};
  }

  /**
   * The decision was not acted on (healthy, skip, a hold, or an act abandoned before its call): an abandoned delete
   * gives back its slot and its turn as a skipped one does; a hold says when to look again.
   */
  release(): Advice {
    const decision = this.decision;
    this.#close(() => {
      if (decision.kind === "act") this.#owner?.afterAction(this.facts, decision, { result: "skip" });
    });
    if (decision.kind !== "hold" || decision.retryAfterMs === undefined) return {};
    return { requeueAfterMs: decision.retryAfterMs, keepFailures: keepsTurn(decision) };
  }

  #close(effect: () => void): void {
    if (!this.#open) throw new Error(`the ticket for ${this.key} was already closed`);
    this.#open = false;
    try {
      effect();
    } finally {
      this.#owner?.closed(this);
    }
  }
}
