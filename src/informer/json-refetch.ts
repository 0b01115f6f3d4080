// Objects a watch could not read as protobuf, each read again as JSON by itself (a GET), never dropped: the watch
// goes on meanwhile, and a later event for the same object, already newer than the one that failed, wins.
import { setTimeout as sleep } from "node:timers/promises";
import type { ObjectKey } from "../kube/protobuf-objects.js";

/** GETs the object as JSON; undefined when it is gone. */
export type FetchJson = (key: ObjectKey, signal: AbortSignal) => Promise<unknown>;

const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;

export class JsonRefetch {
  readonly #fetch: FetchJson;
  /** Store keys with a GET in flight, and whether an event has applied to the key since it was sent. */
  readonly #inFlight = new Map<string, { superseded: boolean }>();

  constructor(fetch: FetchJson) {
    this.#fetch = fetch;
  }

  /** An event for this store key was applied: a GET in flight for it brings older news. */
  applied(storeKey: string): void {
    const pending = this.#inFlight.get(storeKey);
    if (pending) pending.superseded = true;
  }

  /** A full list replaced the cache: every GET in flight brings older news. */
  appliedAll(): void {
    for (const pending of this.#inFlight.values()) pending.superseded = true;
  }

  /**
   * GETs the object (retrying with backoff until it answers) and hands it to `apply` (undefined: it is gone),
   * unless an event for it was applied meanwhile or `signal` ends the wait.
   */
  async refetch(
    key: ObjectKey,
    storeKey: string,
    signal: AbortSignal,
    apply: (object: unknown) => void,
    failed: (error: unknown) => void,
  ): Promise<void> {
    const pending = { superseded: false };
    this.#inFlight.set(storeKey, pending);
    try {
      for (let delayMs = FIRST_RETRY_MS; !signal.aborted && !pending.superseded; ) {
        let object: unknown;
        try {
          object = await this.#fetch(key, signal);
        } catch (error) {
          if (signal.aborted) return;
          failed(error);
          await sleep(delayMs, undefined, { signal }).catch(() => {});
          delayMs = Math.min(delayMs * 2, MAX_RETRY_MS);
          continue;
        }
        if (!pending.superseded && !signal.aborted) apply(object);
        return;
      }
    } finally {
      if (this.#inFlight.get(storeKey) === pending) this.#inFlight.delete(storeKey);
    }
  }
}
