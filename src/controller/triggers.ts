// What puts which pod keys on the work queue, declared in one place (controller/watches.ts): each trigger names a
// source of changes and maps one change to the keys to reconcile. The reconcile itself re-reads the cache, so a
// trigger only says "look at this pod again", never what to do with it.
import { podKey } from "../detect/facts.js";
import type { AgentFacts } from "../informer/cni-agent-pods.js";
import type { StoreChange } from "../informer/facts-store.js";
import type { NamespaceFacts } from "../informer/namespace-facts.js";
import type { PodEvent } from "../informer/pod-cache.js";
import type { PodStore } from "../informer/pod-store.js";
import type { GuardEvent } from "../safety/guard-events.js";
import type { Holds } from "../safety/holds.js";
import { wokenKeys } from "../safety/wakeups.js";
import type { BrokenPods } from "./broken-pods.js";
import type { Request } from "./controller.js";
import { now, type Source, type Trigger, watches } from "./watches.js";

export type TriggerSources = {
  /** The pod cache's changes, each with the verdict it detected. */
  readonly pods: Source<PodEvent>;
  readonly agents: readonly Source<StoreChange<AgentFacts>>[];
  /** Absent without an ambient rule (nothing else reads namespace labels). */
  readonly namespaces: Source<StoreChange<NamespaceFacts>> | undefined;
  readonly guards: Source<GuardEvent>;
  /** Istio's own repair settings changed; absent with --istio-repair=ignore (or without the istio rule). */
  readonly istioRepair: Source<unknown> | undefined;
  /** Ticks every --resync-period and when this replica starts leading. */
  readonly resync: Source<void>;
};

export type TriggerLookups = {
  readonly podStore: PodStore;
  readonly broken: BrokenPods;
  /** Who is held and why: which of them a change wakes is safety/wakeups.ts's table. */
  readonly holds: Pick<Holds, "keys">;
};

export function podTriggers(sources: TriggerSources, lookups: TriggerLookups): readonly Trigger[] {
  const { podStore, broken, holds } = lookups;
  return [
    // Only a pod that looks broken now, or was broken: a 100k-pod initial list must not mean 100k reconciles.
    // A pod not broken yet but within its ambient enrolment grace is looked at again when the grace ends.
    watches("pod changed → that pod", sources.pods, ({ change, verdict }): Request[] => {
      if (verdict?.broken || broken.has(change.key)) return [{ key: change.key }];
      if (verdict?.recheckAfterMs !== undefined) return [{ key: change.key, afterMs: verdict.recheckAfterMs }];
      return [];
    }),
    ...sources.agents.map((agents) =>
      watches("node agent changed → pods held for an agent on its node", agents, (change) => {
        const node = change.current?.nodeName ?? change.previous?.nodeName;
        return node === undefined ? [] : now(wokenKeys(holds, { kind: "agent_changed", node }));
      }),
    ),
    ...(sources.namespaces === undefined
      ? []
      : [
          // Its labels may have put its pods in ambient scope, or taken them out.
          watches("namespace changed → every pod in it", sources.namespaces, function* (change) {
            for (const facts of podStore.inNamespace(change.key)) yield { key: podKey(facts.namespace, facts.name) };
          }),
        ]),
    watches("guards changed → pods they held", sources.guards, (event): Request[] => {
      // A turn moved earlier wakes its one pod then; the rest are holds a change may end (wakeups.ts).
      if (event.kind === "turn_moved") return [{ key: event.key, afterMs: event.waitMs }];
      return now(wokenKeys(holds, event));
    }),
    ...(sources.istioRepair === undefined
      ? []
      : [
          // Istio now repairs in place, deletes, labels or not at all: the pods left to it are judged again.
          watches("Istio's repair settings changed → pods held for it", sources.istioRepair, () =>
            now(wokenKeys(holds, { kind: "istio_repair_changed" })),
          ),
        ]),
    // One missed or failed repair is picked up again.
    watches("resync → every pod known broken", sources.resync, () => now(broken.keys())),
  ];
}
