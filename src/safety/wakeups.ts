// Which held pods a change may free, by hold reason: the one table the triggers read (controller/triggers.ts turns
// the keys into re-queues). Adding a guard, or reordering them in policy.ts, is an edit here and there, in this folder.

import type { HoldReason } from "./hold-reasons.js";
import type { Holds } from "./holds.js";
import type { FreeSlots } from "./inflight-deletions.js";
import type { StormTransition } from "./storm-breaker.js";

/** A change that may let held pods go. */
export type WakeEvent =
  /** A node agent (CNI agent, ztunnel) pod on the node changed. */
  | { readonly kind: "agent_changed"; readonly node: string }
  /** An in-flight slot of the node and namespace was freed, or a pod waiting for one stopped waiting. */
  | { readonly kind: "slot_freed"; readonly node: string; readonly namespace: string; readonly free: FreeSlots }
  /** A storm breaker opened or closed. */
  | { readonly kind: "storm"; readonly transition: StormTransition }
  /** Istio's own repair settings changed: it now repairs in place, deletes, labels or not at all. */
  | { readonly kind: "istio_repair_changed" };

type Where = { readonly node?: string; readonly namespace?: string };
/** The held pods to wake: those held for one of the reasons there, or only the `first` of them held longest. */
export type Wakeup = { readonly reasons: readonly HoldReason[]; readonly where: Where; readonly first?: number };

/**
 * The holds each change may end. Not here: rate_limit's own wait (its reservation's time, and a turn moved earlier,
 * wake the pod by key), the waits with a retry time (loop_backoff, an agent's min-ready, throttled), and the holds
 * only the pod's own change or the resync can end (bare_pod, static_pod, terminal).
 */
export function wakeups(event: WakeEvent): readonly Wakeup[] {
  switch (event.kind) {
    case "agent_changed":
      return [{ reasons: ["cni_agent_not_ready", "ztunnel_not_ready"], where: { node: event.node } }];
    case "slot_freed":
      // As many as can take a slot, longest held first, not all of them: with 90 pods waiting for a node's 10
      // slots, waking every one at each slot freed re-judged each ~45 times to delete it once (bench/README.md).
      // A woken pod that takes no slot (held now for another reason, healed, gone) stops waiting, which wakes the
      // next (safety.ts), so no free slot is left while a pod waits for it.
      return [
        { reasons: ["node_inflight"], where: { node: event.node }, first: event.free.node },
        { reasons: ["namespace_inflight"], where: { namespace: event.namespace }, first: event.free.namespace },
      ];
    case "storm": {
      const { scope, node, open } = event.transition;
      const where = scope === "node" ? { node } : {};
      // Opened: pods waiting for a later guard (their turn, a slot) are held by the storm now (the guard order of
      // policy.ts: the storm comes before both); look again so their hold reason and the storm alert say so.
      // Closed: the pods it held.
      return [{ reasons: open ? ["rate_limit", "node_inflight", "namespace_inflight"] : ["storm"], where }];
    }
    case "istio_repair_changed":
      return [{ reasons: ["mesh_repair_pending", "mesh_repair_active"], where: {} }];
  }
}

/** The keys of the held pods the change may free. */
export function wokenKeys(holds: Pick<Holds, "keys">, event: WakeEvent): string[] {
  return wakeups(event).flatMap(({ reasons, where, first }) => holds.keys(reasons, where, first));
}
