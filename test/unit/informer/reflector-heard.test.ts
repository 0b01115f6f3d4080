// The reflector's measure of life for /healthz: answers count (a list page, a watch's head, an error status),
// dialling does not; a watch that answers its head and then goes silent is restarted as stalled. The scripted
// transport at the seam; the real API server cases are in test/integration/controller/watch-faults.test.ts.
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import { FactsStore } from "../../../src/informer/facts-store.js";
import { Reflector } from "../../../src/informer/reflector.js";
import type { WatchRestartReason } from "../../../src/observe/metrics.js";
import { scriptedTransport } from "../../support/scripted-transport.js";

type WatchAnswer = "no-response" | "500" | "silent-head";

/** Lists answer at once with nothing; every watch dial gets `answer`. */
function transportAnswering(answer: WatchAnswer) {
  return scriptedTransport({
    request: () => ({ body: { items: [], metadata: { resourceVersion: "1" } } }),
    // No response is status 0; a silent head is a stream that never sends a byte until the reflector gives up on it.
    watch: () =>
      answer === "no-response" ? { status: 0 } : answer === "500" ? { status: 500 } : { events: [], hang: true },
  });
}

/**
 * Runs the reflector until at least `ms` have passed since the list and `done` holds (a loaded machine may need
 * longer than `ms` for the dials and restarts the case looks at; waiting for them keeps the case about order).
 */
async function runFor(answer: WatchAnswer, ms: number, done: (dials: number, restarts: number) => boolean) {
  const { transport, calls } = transportAnswering(answer);
  /** When the latest list was answered (0: not yet), and how many watches were dialled. */
  const seen = {
    get listedAt() {
      return calls.findLast((call) => call.kind === "request")?.atMs ?? 0;
    },
    get dials() {
      return calls.filter((call) => call.kind === "watch").length;
    },
  };
  const restarts: WatchRestartReason[] = [];
  const reflector = new Reflector<{ name: string }>({
    transport,
    collection: "pods",
    scope: {},
    store: new FactsStore<{ name: string }>(
      (facts) => facts.name,
      (a, b) => a.name === b.name,
    ),
    transform: () => undefined,
    pageSize: 500,
    watchTimeoutMs: 60_000,
    stallTimeoutMs: 50,
    backoff: { baseMs: 5, maxMs: 10, jitter: 0 },
    observer: {
      listed: () => {},
      watchEvent: () => {},
      watchRestart: (r) => restarts.push(r),
      listenerFailed: () => {},
    },
  });
  const stop = new AbortController();
  const running = reflector.run(stop.signal);
  const deadline = performance.now() + 20_000;
  while (
    performance.now() < deadline &&
    (seen.listedAt === 0 || performance.now() - seen.listedAt < ms || !done(seen.dials, restarts.length))
  ) {
    await sleep(10);
  }
  const result = {
    idleMs: reflector.idleMs,
    sinceListMs: performance.now() - seen.listedAt,
    dials: seen.dials,
    restarts,
  };
  stop.abort();
  await running;
  return result;
}

describe("informer/Reflector: what counts as hearing from the API server", () => {
  it("dialling is not hearing: a server that answers no dial leaves the silence growing from the last list", async () => {
    const run = await runFor("no-response", 300, (dials) => dials > 5);
    expect(run.dials).to.be.greaterThan(5);
    expect(run.restarts.every((reason) => reason === "error")).to.equal(true);
    // Nothing was heard since the list, however many dials there were (the reflector notes the list a moment
    // after the transport answers it; had a dial counted, the silence would be one backoff, ~10 ms).
    expect(run.idleMs).to.be.at.least(run.sinceListMs / 2);
  });

  it("an error status is an answer: the server is there", async () => {
    const run = await runFor("500", 300, (dials) => dials > 5);
    expect(run.dials).to.be.greaterThan(5);
    expect(run.idleMs).to.be.below(run.sinceListMs - 100);
  });

  it("a watch that answers its head and then nothing is restarted as stalled; its head was heard", async () => {
    const run = await runFor("silent-head", 300, (_dials, restarts) => restarts > 1);
    expect(run.restarts.filter((reason) => reason === "stalled").length).to.be.greaterThan(1);
    expect(run.restarts.every((reason) => reason === "stalled")).to.equal(true);
    expect(run.idleMs).to.be.below(run.sinceListMs - 100);
  });
});
