// The generic controller (controller/controller.ts) in the cases issue 25 names: a worker parked in get() when the
// Lease goes hands the key back instead of acting; a term begins once however many workers wait for it; a
// reconcile that throws is recovered, counted and retried; the series are labelled by the controller's name.
import { expect } from "chai";
import { Registry } from "prom-client";
import { Controller } from "../../../src/controller/controller.js";
import type { ReconcileResult } from "../../../src/controller/reconcile-result.js";
import { createMetrics } from "../../../src/observe/metrics.js";
import { WorkQueue } from "../../../src/queue/work-queue.js";
import { HandLeadership } from "../../support/hand-leadership.js";
import { silentLogger } from "../../support/loggers.js";

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

function setup(options: { workers: number; leading: boolean; reconcile: (key: string) => Promise<ReconcileResult> }) {
  const registry = new Registry();
  const metrics = createMetrics(registry, { ruleNames: [], version: "test" });
  const queue = new WorkQueue({ backoff: { baseMs: 1, maxMs: 1, jitter: 0 } });
  const leadership = new HandLeadership(options.leading);
  let terms = 0;
  const reconciled: string[] = [];
  const controller = new Controller({
    queue,
    reconciler: {
      reconcile: (key) => {
        reconciled.push(key);
        return options.reconcile(key);
      },
    },
    workers: options.workers,
    maxRetries: 3,
    leadership,
    onLeading: () => terms++,
    metrics: metrics.controllerRuntime.controller("test-controller", options.workers),
    logger: silentLogger(),
  });
  const stop = new AbortController();
  const running = controller.run(stop.signal);
  const value = async (name: string, labels: Record<string, string>) =>
    (await registry.getSingleMetric(name)?.get())?.values.find((v) =>
      Object.entries(labels).every(([key, wanted]) => v.labels[key] === wanted),
    )?.value;
  return {
    controller,
    queue,
    leadership,
    reconciled,
    terms: () => terms,
    value,
    stop: async () => {
      stop.abort();
      await running;
    },
  };
}

describe("controller/controller", () => {
  it("a worker waiting in get() when leadership goes hands the key back untouched; the next term reconciles it", async () => {
    const t = setup({ workers: 1, leading: true, reconcile: async () => ({ kind: "done" }) });
    await settle(); // the worker is parked in get()
    t.leadership.set(false);
    t.queue.add("node-a");
    await settle();
    expect(t.reconciled, "nothing reconciled without leadership").to.deep.equal([]);
    expect(t.queue.depth, "the key is back on the queue").to.equal(1);
    t.leadership.set(true);
    await settle();
    expect(t.reconciled).to.deep.equal(["node-a"]);
    expect(t.terms()).to.equal(1);
    await t.stop();
  });

  it("is idle with no key ready and none in work; a key waiting out a delay does not count (scan's pass)", async () => {
    let finish = () => {};
    const t = setup({
      workers: 1,
      leading: true,
      reconcile: () => new Promise<ReconcileResult>((resolve) => (finish = () => resolve({ kind: "done" }))),
    });
    await settle();
    expect(t.controller.idle()).to.equal(true);
    t.controller.enqueue({ key: "later", afterMs: 60_000 });
    expect(t.controller.idle(), "a delayed key").to.equal(true);
    t.controller.enqueue({ key: "now" });
    await settle();
    expect(t.controller.idle(), "a key in work").to.equal(false);
    finish();
    await settle();
    expect(t.controller.idle()).to.equal(true);
    await t.stop();
  });

  it("a term begins once, however many workers were waiting for it", async () => {
    const t = setup({ workers: 4, leading: false, reconcile: async () => ({ kind: "done" }) });
    await settle();
    t.leadership.set(true);
    await settle();
    expect(t.terms()).to.equal(1);
    t.leadership.set(false);
    t.queue.add("a");
    await settle();
    t.leadership.set(true);
    await settle();
    expect(t.terms()).to.equal(2);
    expect(t.reconciled).to.deep.equal(["a"]);
    await t.stop();
  });

  it("a term lost and regained while every worker waits in get() still begins before its first reconcile", async () => {
    // onLeading empties the pace's burst (the previous leader may have just spent it): a term that began unseen
    // would start with the old term's tokens.
    const t = setup({ workers: 2, leading: true, reconcile: async () => ({ kind: "done" }) });
    await settle(); // both workers parked in get()
    t.leadership.set(false);
    t.leadership.set(true);
    t.queue.add("a");
    await settle();
    expect(t.terms(), "the new term began").to.equal(1);
    expect(t.reconciled).to.deep.equal(["a"]);
    t.queue.add("b");
    await settle();
    expect(t.terms(), "once per term").to.equal(1);
    await t.stop();
  });

  it("a reconcile that throws is recovered, counted as a panic and an error, and retried", async () => {
    let calls = 0;
    const t = setup({
      workers: 1,
      leading: true,
      reconcile: async () => {
        calls++;
        if (calls === 1) throw new Error("a bug");
        return { kind: "done" };
      },
    });
    t.queue.add("pod");
    // The retry waits out a 1 ms backoff: poll for it (a loaded machine can take far longer) rather than sleep.
    for (const deadline = Date.now() + 10_000; t.reconciled.length < 2 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await settle();
    expect(t.reconciled).to.deep.equal(["pod", "pod"]);
    const labels = { controller: "test-controller" };
    expect(await t.value("controller_runtime_reconcile_panics_total", labels)).to.equal(1);
    expect(await t.value("controller_runtime_reconcile_errors_total", labels)).to.equal(1);
    expect(await t.value("controller_runtime_reconcile_total", { ...labels, result: "success" })).to.equal(1);
    expect(await t.value("controller_runtime_max_concurrent_reconciles", labels)).to.equal(1);
    expect(await t.value("controller_runtime_active_workers", labels)).to.equal(0);
    await t.stop();
  });
});
