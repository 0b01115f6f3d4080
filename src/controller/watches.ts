// A trigger: a source of changes and the map from one change to the keys to reconcile (controller-runtime's
// Watches(source, EnqueueRequestsFromMapFunc), kube-rs's Controller::watches(api, mapper)). Both controllers
// declare theirs with it (controller/triggers.ts, prevent/taint-triggers.ts) and connect them to Controller.enqueue.
import type { Listener } from "../util/publisher.js";
import type { Request } from "./controller.js";

/** Anything that publishes changes: a cache, a reflector, the guards' events, the resync tick. */
export type Source<T> = { subscribe(listener: Listener<T>): void };

export type Trigger = {
  /** "pod changed → that pod": for docs and reading. */
  readonly name: string;
  /** Subscribes to the source; every change's requests go to `enqueue`. */
  connect(enqueue: (request: Request) => void): void;
};

export function watches<T>(name: string, source: Source<T>, map: (change: T) => Iterable<Request>): Trigger {
  return {
    name,
    connect: (enqueue) =>
      source.subscribe((change) => {
        for (const request of map(change)) enqueue(request);
      }),
  };
}

/** Each key, now. */
export const now = (keys: Iterable<string>): Request[] => [...keys].map((key) => ({ key }));
