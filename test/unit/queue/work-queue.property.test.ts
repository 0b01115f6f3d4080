// Property test: simulated workers on a WorkQueue never share a key and never lose one.

import { expect } from "chai";
import fc from "fast-check";
import { WorkQueue } from "../../../src/queue/work-queue.js";
import { FakeClock } from "../fake-clock.js";

const KEYS = ["a", "b", "c", "d", "e"];
const WORKERS = 3;
const policy = { baseMs: 10, maxMs: 400, factor: 2, jitter: 0.5 };

type Op =
  | { kind: "add"; key: string }
  | { kind: "addAfter"; key: string; delayMs: number }
  | { kind: "addRateLimited"; key: string }
  | { kind: "forget"; key: string }
  | { kind: "advance"; ms: number }
  | { kind: "get"; worker: number }
  | { kind: "abort"; worker: number }
  | { kind: "done"; worker: number }
  | { kind: "shutDown" };

const keyArb = fc.constantFrom(...KEYS);
const workerArb = fc.nat(WORKERS - 1);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("add" as const), key: keyArb }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("addAfter" as const),
      key: keyArb,
      delayMs: fc.integer({ min: -5, max: 300 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("addRateLimited" as const), key: keyArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("forget" as const), key: keyArb }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("advance" as const), ms: fc.nat(200) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("get" as const), worker: workerArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("abort" as const), worker: workerArb }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("done" as const), worker: workerArb }) },
);

type Worker = { state: "idle" } | { state: "waiting"; controller: AbortController } | { state: "holding"; key: string };

/** A small seeded PRNG (mulberry32), so fast-check can replay a failing run's jitter too. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Drives a queue with simulated workers and checks the invariants as it goes. */
class Harness {
  readonly clock = new FakeClock();
  readonly queue: WorkQueue;
  readonly workers: Worker[] = Array.from({ length: WORKERS }, () => ({ state: "idle" }));
  // Keys added since they were last handed out (each must be handed out again), with the earliest
  // time any of those adds asked for.
  readonly owed = new Map<string, number>();
  readonly violations: string[] = [];
  shutDown = false;

  constructor(seed: number) {
    this.queue = new WorkQueue({ clock: this.clock, backoff: policy, random: seededRandom(seed) });
  }

  async apply(op: Op): Promise<void> {
    switch (op.kind) {
      case "add":
        this.#owe(op.key, 0);
        this.queue.add(op.key);
        break;
      case "addAfter":
        this.#owe(op.key, op.delayMs);
        this.queue.addAfter(op.key, op.delayMs);
        break;
      case "addRateLimited":
        this.#owe(op.key, this.queue.addRateLimited(op.key));
        break;
      case "forget":
        this.queue.forget(op.key);
        break;
      case "advance":
        this.clock.advance(op.ms);
        break;
      case "get":
        this.#get(op.worker);
        break;
      case "abort": {
        const worker = this.workers[op.worker];
        if (worker?.state === "waiting") worker.controller.abort();
        break;
      }
      case "done":
        this.#done(op.worker);
        break;
      case "shutDown":
        this.shutDown = true;
        this.queue.shutDown();
        break;
    }
    await settle();
    this.#checkCounters();
  }

  /** Lets every worker keep taking and finishing keys until the queue is idle. */
  async drain(): Promise<void> {
    for (let round = 0; round < 100; round++) {
      this.clock.advance(policy.maxMs + 300);
      for (let w = 0; w < WORKERS; w++) {
        this.#done(w);
        this.#get(w);
      }
      await settle();
      this.#checkCounters();
      const busy = this.workers.some((worker) => worker.state === "holding");
      if (!busy && this.queue.depth === 0 && this.queue.delayedCount === 0) return;
    }
    this.violations.push("queue never went idle");
  }

  #owe(key: string, delayMs: number): void {
    if (this.shutDown) return;
    const due = this.clock.now() + Math.max(0, delayMs);
    this.owed.set(key, Math.min(due, this.owed.get(key) ?? due));
  }

  #get(index: number): void {
    if (this.workers[index]?.state !== "idle") return;
    const controller = new AbortController();
    this.workers[index] = { state: "waiting", controller };
    void this.queue.get(controller.signal).then((key) => {
      if (key === undefined) {
        if (!this.shutDown && !controller.signal.aborted) this.violations.push(`worker ${index} got undefined`);
        this.workers[index] = { state: "idle" };
        return;
      }
      if (this.shutDown) this.violations.push(`worker ${index} got ${key} after shutdown`);
      const holder = this.workers.findIndex((w) => w.state === "holding" && w.key === key);
      if (holder >= 0) this.violations.push(`worker ${index} got ${key} while worker ${holder} holds it`);
      this.owed.delete(key);
      this.workers[index] = { state: "holding", key };
    });
  }

  #done(index: number): void {
    const worker = this.workers[index];
    if (worker?.state !== "holding") return;
    this.workers[index] = { state: "idle" };
    this.queue.done(worker.key);
  }

  #checkCounters(): void {
    const holding = this.workers.filter((w) => w.state === "holding").length;
    if (this.queue.processingCount !== holding) {
      this.violations.push(`processingCount ${this.queue.processingCount} but ${holding} workers hold keys`);
    }
    const expectedTimers = this.queue.delayedCount > 0 ? 1 : 0;
    if (this.clock.pendingTimers !== expectedTimers) {
      this.violations.push(`${this.clock.pendingTimers} timers for ${this.queue.delayedCount} delayed keys`);
    }
    // A ready key alongside an idle-waiting worker would mean a missed wake-up.
    const waiting = this.workers.some((w) => w.state === "waiting");
    if (waiting && this.queue.depth > 0) this.violations.push("a worker waits while keys are ready");
    if (this.shutDown) return;
    // Owed keys past their earliest due time that nobody holds must be sitting ready: no delay overstays.
    const now = this.clock.now();
    const held = new Set(this.workers.flatMap((w) => (w.state === "holding" ? [w.key] : [])));
    const owedNow = [...this.owed].filter(([key, due]) => due <= now && !held.has(key)).length;
    if (owedNow > this.queue.depth) this.violations.push(`${owedNow} keys overdue but depth ${this.queue.depth}`);
    // A delayed key must still be owed in the future; otherwise a stale delay would hand it out twice.
    const owedLater = [...this.owed.values()].filter((due) => due > now).length;
    if (this.queue.delayedCount > owedLater) {
      this.violations.push(`${this.queue.delayedCount} delayed keys but only ${owedLater} owed later`);
    }
  }
}

describe("WorkQueue properties", () => {
  it("with several workers, never hands out a key that is processing and never loses an added key", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 80, size: "max" }), fc.nat(), async (ops, seed) => {
        const harness = new Harness(seed);
        for (const op of ops) await harness.apply(op);
        await harness.drain();
        expect(harness.violations).to.deep.equal([]);
        expect([...harness.owed], "keys added but never handed out afterwards").to.deep.equal([]);
        harness.queue.shutDown();
        await settle();
        expect(harness.clock.pendingTimers).to.equal(0);
      }),
      { numRuns: 300 },
    );
  });

  it("after shutDown, releases every waiter, hands out nothing, and drains once holders finish", async () => {
    const withShutDown = fc
      .tuple(fc.array(opArb, { maxLength: 40, size: "max" }), fc.array(opArb, { maxLength: 20, size: "max" }))
      .map(([before, after]): Op[] => [...before, { kind: "shutDown" }, ...after]);
    await fc.assert(
      fc.asyncProperty(withShutDown, fc.nat(), async (ops, seed) => {
        const harness = new Harness(seed);
        for (const op of ops) await harness.apply(op);
        expect(harness.violations).to.deep.equal([]);
        expect(harness.workers.some((w) => w.state === "waiting")).to.equal(false);
        expect([harness.queue.depth, harness.queue.delayedCount, harness.clock.pendingTimers]).to.deep.equal([0, 0, 0]);
        let drained = false;
        void harness.queue.drained().then(() => {
          drained = true;
        });
        for (let w = 0; w < WORKERS; w++) await harness.apply({ kind: "done", worker: w });
        await settle();
        expect(drained).to.equal(true);
        expect(harness.violations).to.deep.equal([]);
      }),
      { numRuns: 200 },
    );
  });
});
