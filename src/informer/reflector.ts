// Keeps one cache (pods, node agents, namespaces, nodes) in step with the API server: initial list (streamed or
// paginated), then watch, forever, publishing every change it makes to the cache to its subscribers.
//
// An explicit state machine with one transition function (step):
//   list  ──ok──▶ watch(rv) ──server timeout──▶ watch(last rv)
//     ▲              │ 410 Gone ─────────────────▶ list (diffed against the cache)
//     │              │ stalled or quiet (no byte for stallTimeout) ─▶ watch(last rv)
//     └── wait ◀─────┘ any other error: capped exponential backoff with jitter (Retry-After honoured)
// It never gives up; only the abort signal ends run(). A streamed list (WatchList) goes on as the watch from its end
// bookmark (one request, as client-go's reflector reads it), and ends as a watch does.
//
// With `protobuf` it asks for Kubernetes protobuf (and reads JSON when the server answers that). An object the
// decoder cannot read is reported and read again as JSON by itself (json-refetch.ts); one without even a readable
// key sends the whole reflector back to JSON for good, from where it was.
import { setTimeout as sleep } from "node:timers/promises";
import type { Scope } from "../config/selectors.js";
import { ApiError, watchErrorEvent } from "../kube/api-error.js";
import type { Collection } from "../kube/collection-path.js";
import { getObject, openWatch } from "../kube/pods-api.js";
import { type ObjectKey, type ProtobufObjects, UndecodableObject } from "../kube/protobuf-objects.js";
import type { KubeTransport } from "../kube/transport.js";
import type { WatchRestartReason } from "../observe/metrics.js";
import { Backoff, type BackoffPolicy } from "../util/backoff.js";
import { type Listener, Publisher } from "../util/publisher.js";
import type { FactsStore, StoreChange } from "./facts-store.js";
import { InitialLister, type Listed, type WatchedOn } from "./initial-list.js";
import { JsonRefetch } from "./json-refetch.js";
import { StallWatchdog } from "./stall-watchdog.js";
import type { WatchEvent } from "./watch-lines.js";
import { readWatch } from "./watch-stream.js";

/** How the watch is going, for metrics and logs (the cache's changes go to subscribers instead). */
export type ReflectorObserver = {
  listed(items: number, durationMs: number): void;
  watchEvent(type: string): void;
  watchRestart(reason: WatchRestartReason, error?: unknown): void;
  /** A subscriber threw on the change of this key: the others heard it, the watch goes on. */
  listenerFailed(key: string, error: unknown): void;
  /** An object not readable as protobuf (read again as JSON); without a key, the reflector went back to JSON. */
  undecodable?(key: ObjectKey | undefined, error: unknown): void;
};

/** Reading a collection as Kubernetes protobuf. */
export type ReflectorProtobuf = {
  readonly objects: ProtobufObjects;
  /** The store's key of an object known by its namespace and name only (one the decoder could not read). */
  readonly storeKey: (key: ObjectKey) => string;
};

/** An object without a readable key: the reflector cannot fetch it alone, so it reads everything as JSON again. */
class ProtobufAbandoned extends Error {}

export type ReflectorOptions<T> = {
  readonly transport: KubeTransport;
  readonly collection: Collection;
  readonly scope: Scope;
  readonly store: FactsStore<T>;
  /** The one edge transform from a raw Pod to the facts kept; undefined drops the object. */
  readonly transform: (pod: unknown) => T | undefined;
  readonly pageSize: number;
  /** List by streaming (WatchList) where the server offers it, by pages otherwise; by pages only when false. */
  readonly watchList?: boolean;
  /** Server-side timeout of each watch; randomised in [t, 2t) so replicas do not reconnect in step. */
  readonly watchTimeoutMs: number;
  /** A watch that delivers no byte (event or bookmark) for this long is dead. */
  readonly stallTimeoutMs: number;
  readonly backoff: BackoffPolicy;
  readonly observer: ReflectorObserver;
  /** Called after each list page with the number of items listed so far. */
  readonly onListProgress?: (items: number) => void;
  /** Read the collection as Kubernetes protobuf (JSON stays the fallback); JSON only when absent. */
  readonly protobuf?: ReflectorProtobuf | undefined;
};

type State =
  | { readonly phase: "list" }
  | { readonly phase: "watch"; readonly resourceVersion: string }
  | { readonly phase: "wait"; readonly delayMs: number; readonly next: State };

/** One watch being read: where it is, and what to do with each event. */
type WatchSession = {
  resourceVersion: string;
  events: number;
  /** The watch a streamed list went on as, from its end bookmark (the API server sends it fewer bookmarks). */
  readonly afterStreamedList: boolean;
  readonly openedAt: number;
  readonly handle: (event: WatchEvent) => void;
};

/** A watch that ends this soon without a single event is treated as an error, like client-go does. */
const SHORT_WATCH_MS = 1_000;

/** What the rest of the program needs of a reflector, whatever it caches. */
export type RunningCache = {
  readonly synced: boolean;
  /** Milliseconds since a response (or a byte of one) last came from the API server for this cache. */
  readonly idleMs: number;
  run(signal: AbortSignal): Promise<void>;
  waitForSync(signal: AbortSignal): Promise<boolean>;
};

export class Reflector<T> implements RunningCache {
  readonly store: FactsStore<T>;
  readonly #options: ReflectorOptions<T>;
  readonly #backoff: Backoff;
  readonly #lister: InitialLister;
  readonly #changes: Publisher<StoreChange<T>>;
  readonly #refetch: JsonRefetch;
  /** Undefined once a keyless undecodable object sent the reflector back to JSON. */
  #protobuf: ReflectorProtobuf | undefined;
  #synced = false;
  #syncWaiters: (() => void)[] = [];
  /** Process start counts as heard: the first list gets the same grace as any later silence. */
  #lastHeard = performance.now();

  constructor(options: ReflectorOptions<T>) {
    this.#options = options;
    this.store = options.store;
    this.#backoff = new Backoff(options.backoff);
    this.#lister = new InitialLister(options.watchList ?? false);
    // A subscriber's bug is not the API server's: reported on its own, never as a watch restart, and the cache and
    // resourceVersion move on with the other subscribers told.
    this.#changes = new Publisher((error, change) => options.observer.listenerFailed(change.key, error));
    this.#protobuf = options.protobuf;
    this.#refetch = new JsonRefetch((key, signal) => getObject(options.transport, options.collection, key, signal));
  }

  /** True once the first full list is in the cache. */
  get synced(): boolean {
    return this.#synced;
  }

  /** Milliseconds since the API server last answered this cache: a list page, a watch's head or bytes, an error
   * status. Dialling is not hearing: a server that refuses every connection leaves this growing. */
  get idleMs(): number {
    return performance.now() - this.#lastHeard;
  }

  /** Hears every later change to the cache, in order, before the next one is made; a throw is reported, not passed on. */
  subscribe(listener: Listener<StoreChange<T>>): void {
    this.#changes.subscribe(listener);
  }

  async waitForSync(signal: AbortSignal): Promise<boolean> {
    if (this.#synced) return true;
    await new Promise<void>((resolve) => {
      this.#syncWaiters.push(resolve);
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
    return this.#synced;
  }

  async run(signal: AbortSignal): Promise<void> {
    let state: State = { phase: "list" };
    while (!signal.aborted) state = await this.#step(state, signal);
  }

  async #step(state: State, signal: AbortSignal): Promise<State> {
    switch (state.phase) {
      case "list":
        return await this.#list(signal);
      case "watch":
        return await this.#watch(state.resourceVersion, signal);
      case "wait":
        await sleep(state.delayMs, undefined, { signal }).catch(() => {});
        return state.next;
    }
  }

  async #list(signal: AbortSignal): Promise<State> {
    const started = performance.now();
    const listed = new Map<string, T>();
    const undecodable: UndecodableObject[] = [];
    const protobuf = this.#protobuf;
    /** The stream's watch, once a streamed list went on as one. */
    let onward: WatchSession | undefined;
    let result: Listed;
    try {
      result = await this.#lister.list({
        transport: this.#options.transport,
        collection: this.#options.collection,
        scope: this.#options.scope,
        pageSize: this.#options.pageSize,
        stallTimeoutMs: this.#options.stallTimeoutMs,
        signal,
        heard: () => this.#heard(),
        protobuf: protobuf?.objects,
        item: (item) => {
          if (item instanceof UndecodableObject) {
            this.#reportUndecodable(item);
            undecodable.push(item);
            return;
          }
          const facts = this.#options.transform(item);
          if (facts !== undefined) listed.set(this.store.keyOf(facts), facts);
        },
        progress: () => this.#options.onListProgress?.(listed.size),
        watchOn: {
          listed: (resourceVersion) => {
            // Each object the decoder could not read is read as JSON before the list is applied (below): the
            // stream ends here, and the watch is opened after those reads.
            if (undecodable.length > 0) return false;
            this.#applyList(listed, started);
            onward = this.#session(resourceVersion, signal, true);
            return true;
          },
          event: (event) => onward?.handle(event),
        },
      });
      if (result.watched !== undefined && onward !== undefined) return this.#watchEnded(onward, result.watched, signal);
      // Rare: each one the decoder could not read is read by itself as JSON (gone since: not listed).
      for (const { key } of undecodable) {
        const object = await getObject(this.#options.transport, this.#options.collection, key as ObjectKey, signal);
        const facts = object === undefined ? undefined : this.#options.transform(object);
        if (facts !== undefined) listed.set(this.store.keyOf(facts), facts);
      }
    } catch (error) {
      if (signal.aborted) return { phase: "list" };
      if (error instanceof ProtobufAbandoned) return { phase: "list" };
      this.#heardIfAnswered(error);
      // An expired continue token (410) means the snapshot is gone: start the list over, after a pause.
      this.#options.observer.watchRestart("error", error);
      return { phase: "wait", delayMs: this.#retryDelay(error), next: { phase: "list" } };
    }
    this.#applyList(listed, started);
    return { phase: "watch", resourceVersion: result.resourceVersion };
  }

  /** The full list replaces the cache (every change published), and the cache is synced. */
  #applyList(listed: Map<string, T>, started: number): void {
    this.#refetch.appliedAll();
    for (const change of this.store.replaceAll(listed)) this.#changes.publish(change);
    this.#options.observer.listed(listed.size, performance.now() - started);
    this.#markSynced();
  }

  async #watch(fromVersion: string, signal: AbortSignal): Promise<State> {
    const session = this.#session(fromVersion, signal);
    const watchdog = new StallWatchdog(this.#options.stallTimeoutMs);
    const feed = () => {
      this.#heard();
      watchdog.arm();
    };
    try {
      // The watchdog runs from the dial: a connection that never answers is as dead as one that went quiet.
      watchdog.arm();
      const timeoutSeconds = Math.round((this.#options.watchTimeoutMs * (1 + Math.random())) / 1000);
      const protobuf = this.#protobuf;
      const response = await openWatch(this.#options.transport, this.#options.collection, this.#options.scope, {
        resourceVersion: fromVersion,
        timeoutSeconds,
        signal: AbortSignal.any([signal, watchdog.signal]),
        protobuf: protobuf !== undefined,
      });
      this.#heard();
      await readWatch(response, protobuf?.objects, feed, session.handle);
      return this.#watchEnded(session, { stalled: false }, signal);
    } catch (error) {
      return this.#watchEnded(session, { error, stalled: watchdog.stalled }, signal);
    } finally {
      watchdog.dispose();
    }
  }

  /** A watch from a resourceVersion: each event applied to the cache, the version moved on. */
  #session(fromVersion: string, signal: AbortSignal, afterStreamedList = false): WatchSession {
    const { observer } = this.#options;
    const session: WatchSession = {
      resourceVersion: fromVersion,
      events: 0,
      afterStreamedList,
      openedAt: performance.now(),
      handle: (event) => {
        session.events++;
        observer.watchEvent(event.type);
        if (event.object instanceof UndecodableObject) {
          this.#reportUndecodable(event.object);
          this.#refetchLater(event.object, signal);
          this.#backoff.reset();
          return;
        }
        if (event.type === "ERROR") throw watchErrorEvent(event.object);
        const version = (event.object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata
          ?.resourceVersion;
        if (typeof version === "string" && version !== "") session.resourceVersion = version;
        this.#apply(event.type, event.object);
        this.#backoff.reset();
      },
    };
    return session;
  }

  /** Where a watch that ended goes next: on from its last version, after a pause, or back to a list. */
  #watchEnded(session: WatchSession, { error, stalled }: WatchedOn, signal: AbortSignal): State {
    const { observer } = this.#options;
    const { resourceVersion } = session;
    if (error === undefined) {
      if (session.events === 0 && performance.now() - session.openedAt < SHORT_WATCH_MS) {
        observer.watchRestart("error", new Error("watch closed at once with no event"));
        return { phase: "wait", delayMs: this.#backoff.next(), next: { phase: "watch", resourceVersion } };
      }
      observer.watchRestart("timeout");
      return { phase: "watch", resourceVersion };
    }
    if (signal.aborted) return { phase: "watch", resourceVersion };
    // From the last event applied, as JSON: the one that could not be read comes again.
    if (error instanceof ProtobufAbandoned) return { phase: "watch", resourceVersion };
    if (stalled) {
      // After a streamed list's end bookmark the API server sends that watch no bookmark until an object of its
      // resource changes (its watch cache drops a bookmark at the version the watch started from, once the end
      // bookmark went out); a plain watch gets one about once a minute. So silence there is no fault: resumed as a
      // plain watch from the same version, quietly. A plain watch that goes silent is restarted as stalled.
      const quiet = session.afterStreamedList && session.events === 0;
      observer.watchRestart(
        quiet ? "quiet" : "stalled",
        new Error(`no byte from the API server for ${this.#options.stallTimeoutMs} ms`),
      );
      return { phase: "watch", resourceVersion };
    }
    this.#heardIfAnswered(error);
    if (error instanceof ApiError && error.status === 410) {
      // The version we hold is compacted away: relist, and the store diff fills in what we missed.
      observer.watchRestart("gone", error);
      return { phase: "list" };
    }
    observer.watchRestart("error", error);
    return { phase: "wait", delayMs: this.#retryDelay(error), next: { phase: "watch", resourceVersion } };
  }

  #heard(): void {
    this.#lastHeard = performance.now();
  }

  /** An error status is still an answer: the server is there (whether its answer helps is another matter). */
  #heardIfAnswered(error: unknown): void {
    if (error instanceof ApiError && error.status > 0) this.#heard();
  }

  #apply(type: string, object: unknown): void {
    if (type === "BOOKMARK") return;
    const facts = this.#options.transform(object);
    if (facts === undefined) return;
    const key = this.store.keyOf(facts);
    if (this.#options.protobuf) this.#refetch.applied(key);
    const change = type === "DELETED" ? this.store.remove(key) : this.store.upsert(facts);
    if (change) this.#changes.publish(change);
  }

  /** Reports an object the decoder could not read; without a key, goes back to JSON (throws to restart there). */
  #reportUndecodable(object: UndecodableObject): asserts object is UndecodableObject & { key: ObjectKey } {
    this.#options.observer.undecodable?.(object.key, object.error);
    if (object.key !== undefined) return;
    this.#protobuf = undefined;
    throw new ProtobufAbandoned("an object without a readable key: reading as JSON from now on", {
      cause: object.error,
    });
  }

  /** Reads the object again as JSON by itself, applied as its latest state unless a newer event came first. */
  #refetchLater(object: UndecodableObject & { key: ObjectKey }, signal: AbortSignal): void {
    const storeKey = (this.#options.protobuf as ReflectorProtobuf).storeKey(object.key);
    void this.#refetch.refetch(
      object.key,
      storeKey,
      signal,
      (json) => {
        const facts = json === undefined ? undefined : this.#options.transform(json);
        const change = facts === undefined ? this.store.remove(storeKey) : this.store.upsert(facts);
        if (change) this.#changes.publish(change);
      },
      (error) => this.#options.observer.watchRestart("error", error),
    );
  }

  /** Backoff, but never sooner than the server asked for with Retry-After. */
  #retryDelay(error: unknown): number {
    const backoff = this.#backoff.next();
    const retryAfter = error instanceof ApiError ? (error.retryAfterMs ?? 0) : 0;
    return Math.max(backoff, retryAfter);
  }

  #markSynced(): void {
    if (this.#synced) return;
    this.#synced = true;
    for (const resolve of this.#syncWaiters) resolve();
    this.#syncWaiters = [];
  }
}
