// Records Kubernetes Events about pods: one per pod UID and reason, and never fails the caller.
import { createPodEvent, type PodEvent } from "../kube/events-api.js";
import type { KubeTransport } from "../kube/transport.js";
import type { Logger } from "../observe/logger.js";

/** Pods whose Events are remembered; the oldest is dropped first once full. */
const MAX_REMEMBERED_PODS = 50_000;

export class EventRecorder {
  readonly #transport: KubeTransport;
  readonly #logger: Logger;
  readonly #onFailure: () => void;
  /** Pod UID → reasons already recorded for it. */
  readonly #recorded = new Map<string, Set<string>>();

  constructor(transport: KubeTransport, logger: Logger, onFailure: () => void) {
    this.#transport = transport;
    this.#logger = logger;
    this.#onFailure = onFailure;
  }

  /**
   * Writes the Event unless one with the same dedup key (default: its reason) was already written for this
   * pod UID, so a pod retried many times gets one Event, not one per retry.
   */
  async record(event: PodEvent, dedupKey = event.reason): Promise<void> {
    const { uid } = event.pod;
    if (this.#recorded.get(uid)?.has(dedupKey)) return;
    this.#remember(uid, dedupKey);
    try {
      await createPodEvent(this.#transport, event);
    } catch (error) {
      // An Event is a courtesy to humans; the repair it describes has already happened.
      this.#recorded.get(uid)?.delete(dedupKey);
      this.#onFailure();
      this.#logger.warn("could not record event", {
        namespace: event.pod.namespace,
        pod: event.pod.name,
        reason: event.reason,
        error: (error as Error).message,
      });
    }
  }

  /** Forgets a pod that is gone, so memory follows the cluster. */
  forgetPod(uid: string): void {
    this.#recorded.delete(uid);
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
