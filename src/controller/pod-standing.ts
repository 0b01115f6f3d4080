// Keeps the guards' picture of the pods current as the cache changes: each pod's standing for the storm breaker
// (meshed, broken, explained by its node's agent), and the in-flight slot of a deleted pod that is now gone.
import { type DetectContext, detect, meshRule } from "../detect/detect.js";
import type { PodFacts } from "../detect/facts.js";
import type { Rule } from "../detect/rule.js";
import type { PodChange } from "../informer/pod-store.js";
import type { SafetyGuards } from "../safety/guards.js";
import type { PodStanding } from "../safety/storm-breaker.js";
import type { GuardEvents } from "./guard-events.js";

export class PodStandings {
  readonly #guards: SafetyGuards;
  readonly #rules: readonly Rule[];
  readonly #context: () => DetectContext;
  readonly #events: GuardEvents;

  constructor(guards: SafetyGuards, rules: readonly Rule[], context: () => DetectContext, events: GuardEvents) {
    this.#guards = guards;
    this.#rules = rules;
    this.#context = context;
    this.#events = events;
  }

  podChanged({ previous, current }: PodChange): void {
    const context = this.#context();
    const verdict = current && detect(current, this.#rules, context);
    const before = previous && this.#standing(previous, detect(previous, this.#rules, context).broken, context);
    const now = current && this.#standing(current, verdict?.broken === true, context);
    const explained =
      current !== undefined && verdict?.broken === true && this.#guards.breakageExplained(current, verdict.rule);
    this.#guards.standingChanged(
      before && previous && { facts: previous, standing: before },
      now && current && { facts: current, standing: { ...now, explained } },
    );
    if (previous && previous.uid !== current?.uid) {
      const freed = this.#guards.podGone(previous.uid);
      if (freed) this.#events.publish({ kind: "slot_freed", node: freed.node, namespace: freed.namespace });
    }
  }

  /** How the pod counts for the storm breaker: only alive, unfinished, meshed pods count at all. */
  #standing(facts: PodFacts, broken: boolean, context: DetectContext): PodStanding | undefined {
    if (facts.deleting || facts.phase === "Failed" || facts.phase === "Succeeded") return undefined;
    if (!meshRule(facts, this.#rules, context)) return undefined;
    return { meshed: true, broken };
  }
}
