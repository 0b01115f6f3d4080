// Background churn: status writes on random healthy pods at a steady rate, each one a MODIFIED watch event.
import { type BenchClient, podPath } from "./kube-client.js";
import { readinessChurn } from "./pod-template.js";
import { type PodRef, populationPod } from "./population.js";

const TICK_MS = 10;
const MAX_IN_FLIGHT = 32;
const CHURN_EPOCH_MS = Date.parse("2026-01-01T00:00:00Z");
/** Counts writes across all churns of the run: Ready times (whole seconds on the wire) never repeat. */
let serial = 0;

export type ChurnCounts = { sent: number; ok: number; failed: number; dropped: number };

export class Churn {
  readonly counts: ChurnCounts = { sent: 0, ok: 0, failed: 0, dropped: 0 };
  readonly #client: BenchClient;
  readonly #pods: number;
  readonly #perSecond: number;
  readonly #pod: (i: number) => PodRef;
  #timer: NodeJS.Timeout | undefined;
  #inFlight = 0;
  #idle: (() => void) | undefined;

  /** `pods`: churn the pods [0, pods) of the population (or of the set `pod` names). */
  constructor(client: BenchClient, pods: number, perSecond: number, pod: (i: number) => PodRef = populationPod) {
    this.#client = client;
    this.#pods = pods;
    this.#perSecond = perSecond;
    this.#pod = pod;
  }

  start(): void {
    if (this.#timer || this.#pods === 0 || this.#perSecond <= 0) return;
    const started = performance.now();
    this.#timer = setInterval(() => {
      // Catch up to the schedule: a late tick sends what the rate says should have gone out by now.
      const due = Math.floor(((performance.now() - started) / 1000) * this.#perSecond);
      while (this.counts.sent + this.counts.dropped < due) {
        if (this.#inFlight >= MAX_IN_FLIGHT) this.counts.dropped++;
        else this.#send();
      }
    }, TICK_MS);
  }

  /** Stops sending and waits for the writes in flight. */
  async stop(): Promise<ChurnCounts> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#inFlight > 0) await new Promise<void>((resolve) => (this.#idle = resolve));
    return { ...this.counts };
  }

  #send(): void {
    const pod = this.#pod(Math.floor(Math.random() * this.#pods));
    this.counts.sent++;
    this.#inFlight++;
    this.#client
      .request(
        "PATCH",
        `${podPath(pod.namespace, pod.name)}/status`,
        // A distinct time per write, so no write is a no-op that the server would not turn into an event.
        readinessChurn(new Date(CHURN_EPOCH_MS + ++serial * 1000).toISOString().replace(".000Z", "Z")),
        "application/merge-patch+json",
      )
      .then(
        () => this.counts.ok++,
        () => this.counts.failed++,
      )
      .finally(() => {
        this.#inFlight--;
        if (this.#inFlight === 0 && !this.#timer) this.#idle?.();
      });
  }
}
