// The pod cache: the pods run watches, as compact facts kept by one reflector, and the bookkeeping every change
// needs, in one fixed order set here (not by who subscribed first):
//   1. the ambient enrolment clocks (detection reads them, so they go first);
//   2. detection, once per change: the verdict of the pod as it is now;
//   3. the cache-size gauge;
//   4. the safety observer (the storm breaker's standings, in-flight slots of pods gone), subscribed first;
//   5. the subscribers (the triggers), which only map a change to keys, after all the bookkeeping is done.
// Steps 4 and 5 get the change with its verdict: nothing after the cache detects again for the same change. Each of
// them runs on its own: a throw in one still lets the others hear the change, and the reflector reports it with the
// pod's key (util/publisher.ts).
import type { Config } from "../config/config.js";
import { type DetectContext, detect, type Verdict } from "../detect/detect.js";
import type { PodFacts } from "../detect/facts.js";
import { factsSchema, toPodFacts } from "../detect/to-pod-facts.js";
import type { Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";
import { type Listener, Publisher } from "../util/publisher.js";
import type { StoreChange } from "./facts-store.js";
import type { NamespaceFacts } from "./namespace-facts.js";
import { podsAsProtobuf, projectionOf } from "./pod-projection.js";
import { type PodChange, PodStore } from "./pod-store.js";
import { Reflector } from "./reflector.js";
import type { ReflectorSettings } from "./reflector-settings.js";
import { type WatchHooks, watchTelemetry } from "./watch-telemetry.js";

/** One change to the cache and the verdict on the pod as it is now (undefined: the pod is gone). */
export type PodEvent = { readonly change: PodChange; readonly verdict: Verdict | undefined };

/** When each pod was first seen awaiting ambient enrolment (controller/unenrolled-since.ts). */
export type EnrolmentClocks = {
  observe(facts: PodFacts, context: DetectContext): void;
  forget(uid: string): void;
};

export type PodCacheOptions = {
  readonly config: Pick<Config, "rules" | "label" | "namespaces" | "scope">;
  readonly settings: ReflectorSettings;
  readonly metrics: Metrics;
  readonly log: Logger;
  readonly failed?: WatchHooks["failed"];
  /** Called after each page of the initial list, with the pods listed so far (scan's progress line). */
  readonly onListProgress?: ((pods: number) => void) | undefined;
  /** The clock, namespace labels and agent times detection needs now. */
  readonly context: () => DetectContext;
  readonly enrolment: EnrolmentClocks;
  /** Namespace changes (ambient only): a namespace's labels may start or stop its pods' enrolment clocks. */
  readonly namespaces?: { subscribe(listener: Listener<StoreChange<NamespaceFacts>>): void } | undefined;
  /** The safety bookkeeping, told of every change after detection and before anything re-queues. */
  readonly safety: Listener<PodEvent>;
};

export class PodCache {
  readonly store = new PodStore();
  readonly reflector: Reflector<PodFacts>;
  readonly #options: PodCacheOptions;
  readonly #events = new Publisher<PodEvent>();

  constructor(options: PodCacheOptions) {
    this.#options = options;
    const { config, metrics } = options;
    const schema = factsSchema(config.rules, { labelKeys: [config.label.key] });
    // Several namespaces cannot be a field selector: drop the others at the edge, before they cost memory.
    const wanted = new Set(config.namespaces);
    const inScope = (namespace: string) => wanted.size <= 1 || wanted.has(namespace);
    this.reflector = new Reflector<PodFacts>({
      ...options.settings,
      collection: "pods",
      scope: config.scope,
      store: this.store,
      protobuf: podsAsProtobuf(projectionOf(schema)),
      transform: (pod) => {
        const facts = toPodFacts(pod, schema);
        return facts && inScope(facts.namespace) ? facts : undefined;
      },
      observer: watchTelemetry(metrics, "pods", options.log, {
        listed: (count) => metrics.cachePods.set(count),
        failed: options.failed,
      }),
      ...(options.onListProgress && { onListProgress: options.onListProgress }),
    });
    this.#events.subscribe(options.safety);
    this.reflector.subscribe((change) => this.#changed(change));
    options.namespaces?.subscribe((change) => {
      const context = options.context();
      for (const facts of this.store.inNamespace(change.key)) options.enrolment.observe(facts, context);
    });
  }

  get size(): number {
    return this.store.size;
  }

  get(key: string): PodFacts | undefined {
    return this.store.get(key);
  }

  values(): IterableIterator<PodFacts> {
    return this.store.values();
  }

  /** Hears every change with its verdict, after the cache's own bookkeeping. */
  subscribe(listener: Listener<PodEvent>): void {
    this.#events.subscribe(listener);
  }

  #changed(change: PodChange): void {
    const { enrolment, config, metrics } = this.#options;
    const { previous, current } = change;
    const context = this.#options.context();
    if (previous && previous.uid !== current?.uid) enrolment.forget(previous.uid);
    if (current) enrolment.observe(current, context);
    const event = { change, verdict: current && detect(current, config.rules, context) };
    metrics.cachePods.set(this.store.size);
    this.#events.publish(event);
  }
}
