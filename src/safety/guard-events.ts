// What the stateful guards announce that may let a held pod go now: the triggers turn these into re-queues.

import { Publisher } from "../util/publisher.js";
import type { GuardOptions } from "./guards.js";
import type { FreeSlots } from "./inflight-deletions.js";
import type { StormTransition } from "./storm-breaker.js";

export type GuardEvent =
  /**
   * An in-flight deletion slot of the node and namespace was freed (a pod we deleted is gone, or a DELETE did not
   * happen), or a pod waiting for one stopped waiting: `free` says how many each takes now.
   */
  | { readonly kind: "slot_freed"; readonly node: string; readonly namespace: string; readonly free: FreeSlots }
  /** A storm breaker opened or closed (on a node, or cluster-wide). */
  | { readonly kind: "storm"; readonly transition: StormTransition }
  /** A held pod's deletion turn came earlier (a skipped delete gave its token back). */
  | { readonly kind: "turn_moved"; readonly key: string; readonly waitMs: number };

/** Made before the guards, so the guards can announce into it without knowing who listens. */
export class GuardEvents extends Publisher<GuardEvent> {
  /** The guards' options that announce here. */
  readonly hooks: Pick<GuardOptions, "onTurnMoved" | "onStormTransition"> = {
    onTurnMoved: (key, waitMs) => this.publish({ kind: "turn_moved", key, waitMs }),
    onStormTransition: (transition) => this.publish({ kind: "storm", transition }),
  };
}
