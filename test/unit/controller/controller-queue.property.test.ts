// Property test one level above the WorkQueue's own: the Controller's run loop (its worker pool, the outcomes it
// feeds back into the queue, a reconcile that throws, leadership coming and going) never runs two reconciles of
// the same key at once, never more than --workers at all, never reconciles while not leading, and never loses a key.

import { expect } from "chai";
import fc from "fast-check";
import { Registry } from "prom-client";
import { Controller } from "../../../src/controller/controller.js";
import type { ReconcileResult } from "../../../src/controller/reconcile-result.js";
import type { Reconciler } from "../../../src/controller/reconciler.js";
import { createMetrics } from "../../../src/observe/metrics.js";
import { WorkQueue } from "../../../src/queue/work-queue.js";
import { HandLeadership } from "../../support/hand-leadership.js";
import { silentLogger } from "../../support/loggers.js";
import { FakeClock } from "../fake-clock.js";

const KEYS = ["ns/a", "ns/b", "ns/c", "ns/d"];
const WORKERS = 2;
const MAX_RETRIES = 3;

type Outcome = "done" | "requeue" | "wait" | "retry" | "throw";
type Op =
  | { kind: "add"; key: string }
  | { kind: "finish"; pick: number; outcome: Outcome; afterMs: number }
  | { kind: "advance"; ms: number }
  | { kind: "lead"; leading: boolean };

const workOps = [
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("add" as const), key: fc.constantFrom(...KEYS) }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("finish" as const),
      pick: fc.nat(7),
      outcome: fc.constantFrom<Outcome>("done", "done", "requeue", "retry", "throw"),
      afterMs: fc.integer({ min: 0, max: 300 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("advance" as const), ms: fc.nat(400) }) },
] as const;
const leadOp = { weight: 1, arbitrary: fc.record({ kind: fc.constant("lead" as const), leading: fc.boolean() }) };
/** Work only: the leader never changes. */
const workArb: fc.Arbitrary<Op> = fc.oneof(...workOps);
/** Work while leadership comes and goes. */
const electedArb: fc.Arbitrary<Op> = fc.oneof(...workOps, leadOp);

type Running = { key: string; finish: (outcome: Outcome, afterMs: number) => void };

/** Stands in for the Reconciler: each reconcile waits until the test finishes it with an outcome. */
class Harness {
  readonly clock = new FakeClock();
  readonly leadership = new HandLeadership();
  readonly queue = new WorkQueue({ clock: this.clock, backoff: { baseMs: 10, maxMs: 200, factor: 2, jitter: 0 } });
  readonly running: Running[] = [];
  readonly violations: string[] = [];
  /** Keys added (or requeued) since their last reconcile started: each must be reconciled again. */
  readonly owed = new Set<string>();
  readonly reconciled = new Map<string, number>();
  readonly controller: Controller;
  readonly #stop = new AbortController();
  readonly done: Promise<void>;

  constructor() {
    const registry = new Registry();
    const metrics = createMetrics(registry, { ruleNames: ["istio"], version: "test" });
    const logger = silentLogger();
    const reconciler = { reconcile: (key: string) => this.#reconcile(key) } as unknown as Reconciler;
    this.controller = new Controller({
      queue: this.queue,
      reconciler,
      workers: WORKERS,
      maxRetries: MAX_RETRIES,
      leadership: this.leadership,
      metrics: metrics.controllerRuntime.controller("test", WORKERS),
      retriesExhausted: metrics.retriesExhausted,
      logger,
    });
    this.done = this.controller.run(this.#stop.signal);
  }

  async apply(op: Op): Promise<void> {
    switch (op.kind) {
      case "add":
        this.owed.add(op.key);
        this.queue.add(op.key);
        break;
      case "finish": {
        const run = this.running[op.pick % Math.max(1, this.running.length)];
        run?.finish(op.outcome, op.afterMs);
        break;
      }
      case "advance":
        this.clock.advance(op.ms);
        break;
      case "lead":
        this.leadership.set(op.leading);
        break;
    }
    await settle();
  }

  /** Leads, finishes everything as done and lets time pass, until nothing runs and nothing waits. */
  async drain(): Promise<void> {
    this.leadership.set(true);
    for (let round = 0; round < 200; round++) {
      for (const run of [...this.running]) run.finish("done", 0);
      this.clock.advance(1_000);
      await settle();
      if (this.running.length === 0 && this.queue.depth === 0 && this.queue.delayedCount === 0) return;
    }
    this.violations.push(`never idle: ${this.running.length} running, depth ${this.queue.depth}`);
  }

  async stop(): Promise<void> {
    for (const run of [...this.running]) run.finish("done", 0);
    this.#stop.abort();
    await settle();
    await this.done;
  }

  #reconcile(key: string): Promise<ReconcileResult> {
    if (this.running.some((run) => run.key === key)) this.violations.push(`two reconciles of ${key} at once`);
    if (this.running.length >= WORKERS) this.violations.push(`more than ${WORKERS} reconciles at once`);
    if (!this.leadership.isLeader) this.violations.push(`reconciled ${key} while not leading`);
    this.owed.delete(key);
    this.reconciled.set(key, (this.reconciled.get(key) ?? 0) + 1);
    return new Promise((resolve, reject) => {
      const run: Running = {
        key,
        finish: (outcome, afterMs) => {
          this.running.splice(this.running.indexOf(run), 1);
          switch (outcome) {
            case "done":
              return resolve({ kind: "done" });
            case "requeue":
              this.owed.add(key);
              return resolve({ kind: "requeue", afterMs });
            case "wait":
              // A failing delete held for its next turn in the pace.
              this.owed.add(key);
              return resolve({ kind: "requeue", afterMs, keepFailures: true });
            case "retry":
              return resolve({ kind: "retry", notBeforeMs: afterMs, error: "injected" });
            case "throw":
              return reject(new Error("injected bug"));
          }
        },
      };
      this.running.push(run);
    });
  }
}

const settle = async () => {
  for (let i = 0; i < 6; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

describe("Controller run loop (properties)", () => {
  const run = async (ops: Op[]) => {
    const harness = new Harness();
    try {
      for (const op of ops) await harness.apply(op);
      await harness.drain();
      expect(harness.violations).to.deep.equal([]);
      expect([...harness.owed], "keys added or requeued but never reconciled afterwards").to.deep.equal([]);
    } finally {
      await harness.stop();
    }
  };

  it("one reconcile per key at a time, at most --workers, and no key lost (requeues, retries, throws)", async () => {
    await fc.assert(fc.asyncProperty(fc.array(workArb, { maxLength: 60, size: "max" }), run), { numRuns: 150 });
  });

  // A key a worker took from the queue is reconciled only if this instance still leads at that moment (the
  // leadership check is made after get(), not before it).
  it("with leadership coming and going, never starts a reconcile while not leading, and loses no key", async () => {
    await fc.assert(fc.asyncProperty(fc.array(electedArb, { maxLength: 60, size: "max" }), run), { numRuns: 150 });
  });

  it("a key whose reconcile keeps failing is retried at most --max-retries times, then dropped until added again", async () => {
    const harness = new Harness();
    try {
      harness.queue.add("ns/a");
      for (let attempt = 0; attempt < MAX_RETRIES + 3; attempt++) {
        await settle();
        harness.running[0]?.finish(attempt % 2 === 0 ? "retry" : "throw", 0);
        await settle();
        harness.clock.advance(1_000);
      }
      await settle();
      expect(harness.reconciled.get("ns/a")).to.equal(MAX_RETRIES + 1);
      expect(harness.running).to.deep.equal([]);
      harness.queue.add("ns/a");
      await settle();
      expect(harness.reconciled.get("ns/a")).to.equal(MAX_RETRIES + 2);
    } finally {
      await harness.stop();
    }
  });

  it("waiting for a turn in the pace between failures keeps the count: still dropped after --max-retries", async () => {
    const harness = new Harness();
    try {
      harness.queue.add("ns/a");
      // fail, wait for the turn, fail, wait, ...: without keepFailures each wait would start the count afresh.
      for (let step = 0; step < 2 * (MAX_RETRIES + 3); step++) {
        await settle();
        harness.running[0]?.finish(step % 2 === 0 ? "retry" : "wait", 0);
        await settle();
        harness.clock.advance(1_000);
      }
      await settle();
      expect(harness.running).to.deep.equal([]);
      // MAX_RETRIES + 1 failures, each but the last followed by its wait.
      expect(harness.reconciled.get("ns/a")).to.equal(2 * MAX_RETRIES + 1);
    } finally {
      await harness.stop();
    }
  });
});
