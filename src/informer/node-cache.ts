// The node cache for startup-taint management: the Nodes run watches (every node, or with --node-name only this
// one), as compact facts kept by one reflector, and the bookkeeping every change needs, in one fixed order (as the
// pod cache's): 1. when each node began carrying a managed key (the nodes tainted now, the longest-taint gauge);
// 2. the subscribers (the triggers), which only map a change to keys. Only the watch writes the store.
import type { Config } from "../config/config.js";
import { fieldSelector, scopeOf } from "../config/selectors.js";
import type { Clock } from "../util/clock.js";
import { type Listener, Publisher } from "../util/publisher.js";
import { FactsStore, type StoreChange } from "./facts-store.js";
import { type NodeFacts, nodeKey, sameNode, startupKeysOn, toNodeFacts } from "./node-facts.js";
import { Reflector, type ReflectorObserver } from "./reflector.js";
import type { ReflectorSettings } from "./reflector-settings.js";

export type NodeChange = StoreChange<NodeFacts>;

export type NodeCacheOptions = {
  readonly config: Pick<Config, "nodeName">;
  readonly settings: ReflectorSettings;
  /** The managed startup-taint keys (--startup-taint-key). */
  readonly keys: readonly string[];
  /** The node watch's metrics and logs, as every other watch has. */
  readonly observer: ReflectorObserver;
  readonly clock: Clock;
};

export class NodeCache {
  /** The nodes by name, read-only to everything but the watch. */
  readonly store = new FactsStore<NodeFacts>(nodeKey, sameNode);
  readonly reflector: Reflector<NodeFacts>;
  readonly #keys: readonly string[];
  readonly #clock: Clock;
  /**
   * Node → when it was first seen carrying a managed key (its creation, when it had the key at first sight), on the
   * wall clock (the API server's creation time is): only shown (a gauge), never acted on. Its size is the number of
   * nodes tainted now, kept by every change (no recount per reconcile).
   */
  readonly #taintedSince = new Map<string, number>();
  readonly #changes = new Publisher<NodeChange>();

  constructor(options: NodeCacheOptions) {
    this.#keys = options.keys;
    this.#clock = options.clock;
    const { nodeName } = options.config;
    this.reflector = new Reflector<NodeFacts>({
      ...options.settings,
      collection: "nodes",
      scope: scopeOf({ fieldSelector: fieldSelector([], nodeName ? [["metadata.name", "=", nodeName]] : []) }),
      store: this.store,
      transform: toNodeFacts,
      observer: options.observer,
    });
    this.reflector.subscribe((change) => this.#changed(change));
  }

  /** Nodes carrying a managed key now. */
  get tainted(): number {
    return this.#taintedSince.size;
  }

  /** Node → when it began carrying a managed key (wall clock), for every node carrying one now. */
  taintedSince(): ReadonlyMap<string, number> {
    return this.#taintedSince;
  }

  /** Hears every change, after the cache's own bookkeeping. */
  subscribe(listener: Listener<NodeChange>): void {
    this.#changes.subscribe(listener);
  }

  #changed(change: NodeChange): void {
    const { key, previous, current } = change;
    if (current === undefined || startupKeysOn(current.taints, this.#keys).length === 0) {
      this.#taintedSince.delete(key);
    } else if (!this.#taintedSince.has(key)) {
      const firstSight = previous === undefined && Number.isFinite(current.createdAtMs);
      this.#taintedSince.set(key, firstSight ? current.createdAtMs : this.#clock.now());
    }
    this.#changes.publish(change);
  }
}
