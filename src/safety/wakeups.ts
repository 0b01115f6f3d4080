// Which held pods a change may free, by hold reason: the one table the triggers read (controller/triggers.ts turns
// the keys into re-queues). Adding a guard, or reordering them in policy.ts, is an edit here and there, in this folder.

import type { HoldReason } from "./hold-reasons.js";
import type { Holds } from "./holds.js";
import type { StormTransition } from "./storm-breaker.js";

/** A change that may let held pods go. */
export type WakeEvent =
  /** A node agent (CNI agent, ztunnel) pod on the node changed. */
  | { readonly kind: "agent_changed"; readonly node: string }
  /** A pod we deleted is gone: its node and namespace have an in-flight deletion slot free again. */
  | { readonly kind: "slot_freed"; readonly node: string; readonly namespace: string }
  /** A storm breaker opened or closed. */
  | { readonly kind: "storm"; readonly transition: StormTransition }
  /** Istio's own repair settings changed: it now repairs in place, deletes, labels or not at all. */
  | { readonly kind: "istio_repair_changed" };

type Where = { readonly node?: string; readonly namespace?: string };
export type Wakeup = { readonly reasons: readonly HoldReason[]; readonly where: Where };

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
      return [
        { reasons: ["node_inflight"], where: { node: event.node } },
        { reasons: ["namespace_inflight"], where: { namespace: event.namespace } },
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
  return wakeups(event).flatMap(({ reasons, where }) => holds.keys(reasons, where));
}
