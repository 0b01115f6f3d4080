// Records Kubernetes Events about pods (and nodes): one per object UID and reason, written in the background so a repair never
// waits for its Event, and never fails the caller.
import { setTimeout as sleep } from "node:timers/promises";
import PQueue from "p-queue";
import { ApiError } from "../kube/api-error.js";
import { createEvent, type EventSubject, type PodEvent } from "../kube/events-api.js";
import type { KubeTransport } from "../kube/transport.js";
import type { Logger } from "../observe/logger.js";
import { messageOf } from "../util/message-of.js";

/** Pods whose Events are remembered; the oldest is dropped first once full. */
const MAX_REMEMBERED_PODS = 50_000;
/** Event writes in flight at once: Events are for humans and must not crowd out repairs. */
export const EVENT_WRITERS = 2;
/** Events waiting to be written; beyond this (API server down or very slow) new ones are dropped and counted. */
const MAX_WAITING_EVENTS = 1_000;
/**
 * Tries per Event while the server throttles it (429, or 503 with Retry-After). A throttled answer pauses every
 * writer until its Retry-After (the server throttles our flow, not one Event); meanwhile Events back up into the
 * bounded backlog above.
 */
const MAX_THROTTLED_ATTEMPTS = 10;
/** The wait after a 429 that came without Retry-After. */
const THROTTLED_DEFAULT_WAIT_MS = 1_000;

/** One Event to write: about what, the Event, and the keys it is deduplicated by. */
type EventJob = {
  readonly about: EventSubject;
  readonly event: Omit<PodEvent, "pod">;
  readonly key: string;
  readonly dedupKey: string;
};

export class EventRecorder {
  readonly #transport: KubeTransport;
  readonly #logger: Logger;
  readonly #onFailure: () => void;
  /** Pod UID (or another subject, see post) → reasons already recorded for it. */
  readonly #recorded = new Map<string, Set<string>>();
  readonly #writers = new PQueue({ concurrency: EVENT_WRITERS });
  /** Aborted by stopRetrying(): a Retry-After wait must not keep a stopping process alive. */
  readonly #retrying = new AbortController();
  /** performance.now() until which no Event is written: the latest Retry-After. */
  #pausedUntil = 0;

  constructor(transport: KubeTransport, logger: Logger, onFailure: () => void) {
    this.#transport = transport;
    this.#logger = logger;
    this.#onFailure = onFailure;
  }

  /**
   * Queues the Event unless one with the same dedup key (default: its reason) was already queued for this pod
   * UID, so a pod retried many times gets one Event, not one per retry. `subject` replaces the UID where one
   * thing outlives its pod objects (a static pod whose mirror the kubelet re-creates). Returns at once; `drain()`
   * waits.
   */
  post(event: PodEvent, dedupKey = event.reason, subject = event.pod.uid): void {
    this.postAbout({ kind: "Pod", ...event.pod }, event, dedupKey, subject);
  }

  /** The same for any object (a Node's startup taint): deduplicated by `key` (its UID) and dedupKey. */
  postAbout(about: EventSubject, event: Omit<PodEvent, "pod">, dedupKey = event.reason, key = about.uid): void {
    if (this.#recorded.get(key)?.has(dedupKey)) return;
    this.#remember(key, dedupKey);
    const job = { about, event, key, dedupKey };
    if (this.#writers.size >= MAX_WAITING_EVENTS) {
      // Dropped for good (still remembered), so a pod retried while the server is slow warns once, not each time.
      this.#failed(job, `dropped: ${MAX_WAITING_EVENTS} events already wait to be written`);
      return;
    }
    void this.#writers.add(() => this.#write(job));
  }

  /** Resolves once every queued Event is written or has failed: call before closing the transport. */
  async drain(): Promise<void> {
    await this.#writers.onIdle();
  }

  /** Gives up the Retry-After waits in progress (their Events count as failed): the shutdown deadline passed. */
  stopRetrying(): void {
    this.#retrying.abort();
  }

  /** Events queued or being written. */
  get backlog(): number {
    return this.#writers.size + this.#writers.pending;
  }

  /** Forgets a pod that is gone, so memory follows the cluster. */
  forgetPod(uid: string): void {
    this.#recorded.delete(uid);
  }

  async #write(job: EventJob): Promise<void> {
    const { about, event, key, dedupKey } = job;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#pause();
        await createEvent(this.#transport, about, event);
        return;
      } catch (error) {
        const throttled = error instanceof ApiError && error.throttled;
        if (throttled && attempt < MAX_THROTTLED_ATTEMPTS && !this.#retrying.signal.aborted) {
          const waitMs = error.retryAfterMs ?? THROTTLED_DEFAULT_WAIT_MS;
          this.#pausedUntil = Math.max(this.#pausedUntil, performance.now() + waitMs);
          this.#logger.debug("event throttled; retrying after Retry-After", { reason: event.reason, waitMs, attempt });
          continue;
        }
        // An Event is a courtesy to humans; the repair it describes has already happened. Forget it so a
        // later attempt at the same pod may write it.
        this.#recorded.get(key)?.delete(dedupKey);
        this.#failed(job, messageOf(error));
        return;
      }
    }
  }

  /**
   * Waits out the latest Retry-After, looking again after each wait: the other writer's request, already on its way,
   * may come back throttled with a later Retry-After while this one sleeps. Throws once stopRetrying() was called.
   */
  async #pause(): Promise<void> {
    for (let waitMs = this.#pausedUntil - performance.now(); waitMs > 0; ) {
      await sleep(waitMs, undefined, { signal: this.#retrying.signal });
      waitMs = this.#pausedUntil - performance.now();
    }
  }

  #failed({ about, event }: EventJob, error: string): void {
    this.#onFailure();
    const object = about.kind === "Pod" ? { namespace: about.namespace, pod: about.name } : { node: about.name };
    this.#logger.warn("could not record event", { ...object, reason: event.reason, error });
  }

  #remember(uid: string, reason: string): void {
    const reasons = this.#recorded.get(uid);
    if (reasons) {
      reasons.add(reason);
      return;
    }
    if (this.#recorded.size >= MAX_REMEMBERED_PODS) {
      const oldest = this.#recorded.keys().next().value;
      if (oldest !== undefined) this.#recorded.delete(oldest);
    }
    this.#recorded.set(uid, new Set([reason]));
  }
}
