// When this controller first saw each pod in ambient scope and not enrolled. Labelling a namespace (or a pod)
// ambient brings long-running pods into scope at once; the node agent needs a moment to enrol them, so their grace
// counts from the change as seen here, and after a restart from the first sight (never earlier than we know).
import { awaitsEnrolment, type DetectContext } from "../detect/ambient.js";
import type { PodFacts } from "../detect/facts.js";
import type { AmbientRule } from "../detect/rule.js";
import { type Clock, systemClock, wallTimeOf } from "../util/clock.js";

export class UnenrolledSince {
  readonly #rules: readonly AmbientRule[];
  /**
   * Pod UID → first sight, on the monotonic clock (how long ago is what counts); only pods awaiting enrolment, so an
   * enrolled mesh costs nothing.
   */
  readonly #since = new Map<string, number>();
  readonly #clock: Clock;

  constructor(rules: readonly AmbientRule[], clock: Clock = systemClock) {
    this.#rules = rules;
    this.#clock = clock;
  }

  get size(): number {
    return this.#since.size;
  }

  /**
   * A pod was added or changed, or its namespace's labels did: start its clock when it newly awaits enrolment,
   * drop it once it does not (enrolled, out of scope, finished), so leaving and re-entering scope starts over.
   */
  observe(facts: PodFacts, context: DetectContext): void {
    const awaits = this.#rules.some((rule) => awaitsEnrolment(facts, rule, context));
    if (!awaits) this.#since.delete(facts.uid);
    else if (!this.#since.has(facts.uid)) this.#since.set(facts.uid, this.#clock.monotonic());
  }

  /** The pod UID left the cache. */
  forget(uid: string): void {
    this.#since.delete(uid);
  }

  /**
   * For the detect context: the first sight as a wall time (detection compares it with the sandbox's), read back from
   * the monotonic clock, so the time since it is what passed here whatever the wall clock did. A pod not observed yet
   * (a change still on its way) starts its clock now: the fail-safe side, a grace never shorter than what we saw.
   */
  sinceOf(uid: string): number {
    let since = this.#since.get(uid);
    if (since === undefined) {
      since = this.#clock.monotonic();
      this.#since.set(uid, since);
    }
    return wallTimeOf(this.#clock, since);
  }
}
