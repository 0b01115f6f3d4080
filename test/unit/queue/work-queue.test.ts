// Unit tests for WorkQueue, driven by a FakeClock.

import { expect } from "chai";
import { WorkQueue, type WorkQueueOptions } from "../../../src/queue/work-queue.js";
import { systemClock } from "../../../src/util/clock.js";
import { FakeClock } from "../fake-clock.js";

const policy = { baseMs: 100, maxMs: 1000, factor: 2 };

function setup(options: Partial<WorkQueueOptions> = {}) {
  const clock = new FakeClock();
  const queue = new WorkQueue({ clock, backoff: policy, ...options });
  return { clock, queue };
}

/** Lets promise continuations (get() resolutions) run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Calls drained() and records whether it has resolved, without blocking the test. */
function watchDrained(queue: WorkQueue) {
  const state = { resolved: false };
  void queue.drained().then(() => {
    state.resolved = true;
  });
  return state;
}

/** Starts a get() and records its outcome without blocking the test. */
function pendingGet(queue: WorkQueue, signal?: AbortSignal) {
  const state: { settled: boolean; key: string | undefined } = { settled: false, key: undefined };
  void queue.get(signal).then((key) => {
    state.settled = true;
    state.key = key;
  });
  return state;
}

describe("WorkQueue", () => {
  describe("add and get", () => {
    it("hands out ready keys FIFO and marks them processing", async () => {
      const { queue } = setup();
      queue.add("a");
      queue.add("b");
      queue.add("c");
      expect(queue.depth).to.equal(3);
      expect(await queue.get()).to.equal("a");
      expect(await queue.get()).to.equal("b");
      expect(queue.depth).to.equal(1);
      expect(queue.processingCount).to.equal(2);
    });

    it("deduplicates a key that is already ready", async () => {
      const { queue } = setup();
      queue.add("a");
      queue.add("b");
      queue.add("a");
      expect(queue.depth).to.equal(2);
      expect(await queue.get()).to.equal("a");
      expect(await queue.get()).to.equal("b");
      expect(queue.depth).to.equal(0);
    });

    it("wakes a waiting get() when a key arrives, waiters served in order", async () => {
      const { queue } = setup();
      const first = pendingGet(queue);
      const second = pendingGet(queue);
      await settle();
      expect(first.settled).to.equal(false);
      queue.add("a");
      await settle();
      expect(first).to.deep.equal({ settled: true, key: "a" });
      expect(second.settled).to.equal(false);
      expect(queue.depth).to.equal(0);
      expect(queue.processingCount).to.equal(1);
      queue.add("b");
      await settle();
      expect(second).to.deep.equal({ settled: true, key: "b" });
    });
  });

  describe("processing and done", () => {
    it("does not hand out a key being processed; re-queues it once on done if added meanwhile", async () => {
      const { queue } = setup();
      queue.add("a");
      expect(await queue.get()).to.equal("a");
      queue.add("a");
      queue.add("a");
      expect(queue.depth).to.equal(0);
      const other = pendingGet(queue);
      await settle();
      expect(other.settled).to.equal(false);
      queue.done("a");
      await settle();
      expect(other).to.deep.equal({ settled: true, key: "a" });
      queue.done("a");
      expect(queue.depth).to.equal(0);
      expect(queue.processingCount).to.equal(0);
    });

    it("does not re-queue on done if the key was not added meanwhile", async () => {
      const { queue } = setup();
      queue.add("a");
      await queue.get();
      queue.done("a");
      expect(queue.depth).to.equal(0);
      expect(queue.processingCount).to.equal(0);
    });

    it("ignores done for a key that is not processing, so a queued key is not duplicated", async () => {
      const { queue } = setup();
      queue.add("a");
      queue.done("a");
      queue.done("never-added");
      expect(queue.depth).to.equal(1);
      expect(await queue.get()).to.equal("a");
      expect(queue.depth).to.equal(0);
    });
  });

  describe("addAfter", () => {
    it("makes the key ready only once the delay has passed", async () => {
      const { clock, queue } = setup();
      queue.addAfter("a", 50);
      expect(queue.delayedCount).to.equal(1);
      expect(queue.depth).to.equal(0);
      clock.advance(49);
      expect(queue.depth).to.equal(0);
      clock.advance(1);
      expect(queue.delayedCount).to.equal(0);
      expect(await queue.get()).to.equal("a");
    });

    it("keeps the earliest due time when the same key is delayed twice", () => {
      const { clock, queue } = setup();
      queue.addAfter("a", 100);
      queue.addAfter("a", 30);
      queue.addAfter("a", 200);
      expect(queue.delayedCount).to.equal(1);
      clock.advance(30);
      expect(queue.depth).to.equal(1);
      expect(queue.delayedCount).to.equal(0);
      clock.advance(500);
      expect(queue.depth).to.equal(1);
    });

    it("a plain add makes a delayed key ready now and drops the delay", () => {
      const { clock, queue } = setup();
      queue.addAfter("a", 100);
      queue.add("a");
      expect(queue.depth).to.equal(1);
      expect(queue.delayedCount).to.equal(0);
      expect(clock.pendingTimers).to.equal(0);
    });

    it("treats a delay of zero or less as a plain add", () => {
      const { queue } = setup();
      queue.addAfter("a", 0);
      queue.addAfter("b", -10);
      expect(queue.depth).to.equal(2);
      expect(queue.delayedCount).to.equal(0);
    });

    it("rejects a non-finite delay", () => {
      const { queue } = setup();
      expect(() => queue.addAfter("a", Number.NaN)).to.throw(RangeError);
      expect(() => queue.addAfter("a", Number.POSITIVE_INFINITY)).to.throw(RangeError);
    });

    it("ignores a delay for a key that is already ready", () => {
      const { clock, queue } = setup();
      queue.add("a");
      queue.addAfter("a", 50);
      expect(queue.delayedCount).to.equal(0);
      expect(clock.pendingTimers).to.equal(0);
      expect(queue.depth).to.equal(1);
    });

    it("delays a key being processed and re-queues it after done once due", async () => {
      const { clock, queue } = setup();
      queue.add("a");
      await queue.get();
      queue.addAfter("a", 50);
      clock.advance(50);
      // Due, but still processing: it waits for done().
      expect(queue.depth).to.equal(0);
      queue.done("a");
      expect(queue.depth).to.equal(1);
    });

    it("releases delayed keys in due order", async () => {
      const { clock, queue } = setup();
      queue.addAfter("c", 30);
      queue.addAfter("a", 10);
      queue.addAfter("b", 20);
      clock.advance(30);
      expect([await queue.get(), await queue.get(), await queue.get()]).to.deep.equal(["a", "b", "c"]);
    });

    it("uses a single timer however many keys are delayed, re-armed for an earlier key", () => {
      const { clock, queue } = setup();
      for (let i = 0; i < 10_000; i++) queue.addAfter(`k${i}`, 1000 + i);
      expect(queue.delayedCount).to.equal(10_000);
      expect(clock.pendingTimers).to.equal(1);
      expect(clock.nextDue).to.equal(1000);
      queue.addAfter("early", 5);
      expect(clock.pendingTimers).to.equal(1);
      expect(clock.nextDue).to.equal(5);
      clock.advance(5);
      expect(queue.depth).to.equal(1);
      expect(clock.nextDue).to.equal(1000);
      clock.advance(20_000);
      expect(queue.depth).to.equal(10_001);
      expect(clock.pendingTimers).to.equal(0);
    });

    it("re-arms for the next key when the earliest is cancelled by a plain add", () => {
      const { clock, queue } = setup();
      queue.addAfter("a", 10);
      queue.addAfter("b", 40);
      queue.add("a");
      expect(clock.pendingTimers).to.equal(1);
      expect(clock.nextDue).to.equal(40);
    });

    it("hands a delayed key straight to a waiting get()", async () => {
      const { clock, queue } = setup();
      const waiter = pendingGet(queue);
      queue.addAfter("a", 10);
      clock.advance(10);
      await settle();
      expect(waiter).to.deep.equal({ settled: true, key: "a" });
    });
  });

  describe("addRateLimited", () => {
    it("backs off exponentially per key, caps at maxMs, and forget() starts over", () => {
      const { queue } = setup();
      const delays = Array.from({ length: 6 }, () => queue.addRateLimited("a"));
      expect(delays).to.deep.equal([100, 200, 400, 800, 1000, 1000]);
      expect(queue.failures("a")).to.equal(6);
      expect(queue.failures("b")).to.equal(0);
      expect(queue.addRateLimited("b")).to.equal(100);
      queue.forget("a");
      expect(queue.failures("a")).to.equal(0);
      expect(queue.addRateLimited("a")).to.equal(100);
    });

    it("queues the key after the returned delay", () => {
      const { clock, queue } = setup();
      queue.addRateLimited("a");
      const delay = queue.addRateLimited("a");
      expect(delay).to.equal(200);
      // The earlier, shorter delay still wins.
      clock.advance(100);
      expect(queue.depth).to.equal(1);
    });

    it("waits at least minDelayMs (a server's Retry-After) when that is longer than the backoff", () => {
      const { clock, queue } = setup();
      expect(queue.addRateLimited("a", 5_000)).to.equal(5_000);
      expect(queue.failures("a")).to.equal(1);
      clock.advance(4_999);
      expect(queue.depth).to.equal(0);
      clock.advance(1);
      expect(queue.depth).to.equal(1);
      expect(queue.addRateLimited("b", 10)).to.equal(100);
    });

    it("applies the policy's jitter with the injected random source", () => {
      const { queue } = setup({ backoff: { ...policy, jitter: 1 }, random: () => 0.5 });
      expect(queue.addRateLimited("a")).to.equal(50);
      expect(queue.addRateLimited("a")).to.equal(100);
    });

    it("rejects a bad backoff policy at construction", () => {
      expect(() => new WorkQueue({ backoff: { baseMs: -1, maxMs: 10 } })).to.throw(RangeError);
    });
  });

  describe("get with an AbortSignal", () => {
    it("resolves undefined when the signal aborts, without consuming a later key", async () => {
      const { queue } = setup();
      const controller = new AbortController();
      const waiter = pendingGet(queue, controller.signal);
      controller.abort();
      await settle();
      expect(waiter).to.deep.equal({ settled: true, key: undefined });
      queue.add("a");
      expect(queue.depth).to.equal(1);
      expect(queue.processingCount).to.equal(0);
    });

    it("resolves undefined at once for an already-aborted signal, leaving ready keys", async () => {
      const { queue } = setup();
      queue.add("a");
      expect(await queue.get(AbortSignal.abort())).to.equal(undefined);
      expect(queue.depth).to.equal(1);
    });
  });

  describe("shutDown and drained", () => {
    it("releases every waiting get() with undefined and answers later gets at once", async () => {
      const { queue } = setup();
      const waiters = [pendingGet(queue), pendingGet(queue)];
      queue.shutDown();
      await settle();
      expect(waiters).to.deep.equal([
        { settled: true, key: undefined },
        { settled: true, key: undefined },
      ]);
      expect(await queue.get()).to.equal(undefined);
      expect(queue.isShutDown).to.equal(true);
    });

    it("drops ready and delayed keys, cancels the timer, and ignores later adds", async () => {
      const { clock, queue } = setup();
      queue.add("a");
      queue.addAfter("b", 10);
      queue.shutDown();
      expect(clock.pendingTimers).to.equal(0);
      queue.add("c");
      queue.addAfter("d", 10);
      expect(queue.addRateLimited("e")).to.equal(0);
      expect([queue.depth, queue.delayedCount, clock.pendingTimers]).to.deep.equal([0, 0, 0]);
      expect(await queue.get()).to.equal(undefined);
    });

    it("does not re-queue a dirty key when its processing ends after shutdown", async () => {
      const { queue } = setup();
      queue.add("a");
      await queue.get();
      queue.add("a");
      queue.shutDown();
      queue.done("a");
      expect(queue.depth).to.equal(0);
      expect(await queue.get()).to.equal(undefined);
    });

    it("drained() resolves once every in-flight key is done", async () => {
      const { queue } = setup();
      queue.add("a");
      queue.add("b");
      await queue.get();
      await queue.get();
      queue.shutDown();
      const drained = watchDrained(queue);
      queue.done("a");
      await settle();
      expect(drained.resolved).to.equal(false);
      queue.done("b");
      await settle();
      expect(drained.resolved).to.equal(true);
    });

    it("drained() resolves at once when nothing is processing; a queued key is not waited for", async () => {
      const { queue } = setup();
      queue.add("a");
      const drained = watchDrained(queue);
      await settle();
      expect(drained.resolved).to.equal(true);
      expect(queue.depth, "still queued").to.equal(1);
    });

    it("leaves no real timer behind after shutDown", () => {
      // With the system clock, a leaked timer would keep mocha (run without --exit) alive.
      const queue = new WorkQueue({ clock: systemClock, backoff: policy });
      queue.addAfter("a", 60_000);
      queue.addRateLimited("b");
      queue.shutDown();
      expect(queue.delayedCount).to.equal(0);
    });
  });
});
