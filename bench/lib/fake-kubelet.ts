// Plays the kubelet for victim pods: once a pod is being deleted, finish it (grace 0), as a node would.
// Without this a deleted pod with spec.nodeName stays Terminating forever here (no kubelet), and in-flight
// deletion limits would never see a deletion finish. It also tells the bench when each victim was deleted.
import { setTimeout as sleep } from "node:timers/promises";
import { messageOf } from "../../src/util/message-of.js";
import { type BenchClient, podPath } from "./kube-client.js";
import { VICTIM_LABEL, victimKey } from "./victims.js";

/** Its client's user agent: its DELETEs are the bench's own, and the audit log tells when a pod was gone. */
export const KUBELET_USER_AGENT = "bench-kubelet/1";

type WatchedPod = {
  metadata?: { namespace?: string; name?: string; uid?: string; resourceVersion?: string; deletionTimestamp?: string };
};

export class FakeKubelet {
  /** Victim key → when (performance.now()) the bench first saw it being deleted. */
  readonly deletedAt = new Map<string, number>();
  /**
   * How long a deleted pod takes to terminate before the kubelet finishes it: 0 (at once) unless a scenario
   * needs the in-flight caps to bind, as a node tearing down a sandbox would (the outage runs), and sets it back.
   */
  terminationMs = 0;
  readonly #client: BenchClient;
  readonly #stop = new AbortController();
  #running: Promise<void> | undefined;
  #finishing = 0;

  constructor(client: BenchClient) {
    this.#client = client;
  }

  start(): void {
    this.#running ??= this.#watchLoop();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#running;
    while (this.#finishing > 0) await sleep(20);
  }

  /** Waits until every key was seen deleted, or the timeout; returns how many were. */
  async waitForDeleted(keys: readonly string[], timeoutMs: number): Promise<number> {
    const deadline = performance.now() + timeoutMs;
    const count = () => keys.filter((key) => this.deletedAt.has(key)).length;
    while (count() < keys.length && performance.now() < deadline) await sleep(50);
    return count();
  }

  async #watchLoop(): Promise<void> {
    const selector = encodeURIComponent(`${VICTIM_LABEL.key}=${VICTIM_LABEL.value}`);
    let resourceVersion = "";
    while (!this.#stop.signal.aborted) {
      try {
        if (resourceVersion === "") {
          const list = (await this.#client.request("GET", `/api/v1/pods?labelSelector=${selector}`)) as {
            metadata: { resourceVersion: string };
            items: WatchedPod[];
          };
          for (const pod of list.items) this.#see(pod);
          resourceVersion = list.metadata.resourceVersion;
        }
        const path = `/api/v1/pods?watch=1&allowWatchBookmarks=true&labelSelector=${selector}&resourceVersion=${resourceVersion}&timeoutSeconds=300`;
        const decoder = new TextDecoder();
        let buffered = "";
        for await (const chunk of await this.#client.stream(path, this.#stop.signal)) {
          buffered += decoder.decode(chunk, { stream: true });
          const lines = buffered.split("\n");
          buffered = lines.pop() ?? "";
          const events = lines.map((line) => JSON.parse(line) as { type: string; object: WatchedPod });
          // An ERROR event (e.g. 410 Gone) ends this watch: list again.
          if (events.some((event) => event.type === "ERROR")) resourceVersion = "";
          if (resourceVersion === "") break;
          for (const event of events) {
            resourceVersion = event.object.metadata?.resourceVersion ?? resourceVersion;
            if (event.type !== "BOOKMARK") this.#see(event.object);
          }
        }
      } catch (error) {
        if (this.#stop.signal.aborted) return;
        console.error(`fake kubelet: watch failed, retrying: ${messageOf(error)}`);
        resourceVersion = "";
        await sleep(500);
      }
    }
  }

  #see(pod: WatchedPod): void {
    const { namespace, name, uid, deletionTimestamp } = pod.metadata ?? {};
    if (!namespace || !name || !deletionTimestamp) return;
    const key = victimKey({ namespace, name });
    if (this.deletedAt.has(key)) return;
    this.deletedAt.set(key, performance.now());
    this.#finishing++;
    void sleep(this.terminationMs)
      .then(
        async () =>
          await this.#client.tolerant(
            "DELETE",
            podPath(namespace, name),
            {
              apiVersion: "v1",
              kind: "DeleteOptions",
              gracePeriodSeconds: 0,
              preconditions: { uid },
            },
            true,
          ),
      )
      .catch((error: unknown) => console.error(`fake kubelet: ${messageOf(error)}`))
      .finally(() => this.#finishing--);
  }
}
