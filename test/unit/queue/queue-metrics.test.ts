// The workqueue metrics count what client-go's do (util/workqueue/metrics.go): adds only for keys that become
// due, depth including a key re-added while it is processed, queue duration from the first add to the hand-out,
// a retry for every addAfter, and the unfinished-work gauges over the keys processing now.
import { expect } from "chai";
import { Registry } from "prom-client";
import { createStandardMetrics } from "../../../src/observe/standard-metrics.js";
import { WorkQueue } from "../../../src/queue/work-queue.js";
import { FakeClock } from "../fake-clock.js";

function setup() {
  const clock = new FakeClock(1_000);
  const registry = new Registry();
  const standard = createStandardMetrics(registry, "test");
  const queue = new WorkQueue({
    clock,
    backoff: { baseMs: 100, maxMs: 1_000, jitter: 0 },
    observer: standard.queue("test", () => clock.now()),
  });
  /** A counter's or gauge's value for this queue. */
  const value = async (name: string) =>
    (await registry.getSingleMetric(name)?.get())?.values.find((v) => v.labels.name === "test")?.value ?? 0;
  /** A histogram's _sum or _count for this queue. */
  const histogram = async (name: string, part: "sum" | "count") =>
    (await registry.getSingleMetric(name)?.get())?.values.find(
      (v) => "metricName" in v && v.metricName === `${name}_${part}`,
    )?.value ?? 0;
  return { clock, queue, value, histogram };
}

describe("queue/QueueMetrics: client-go's workqueue semantics", () => {
  it("counts an add only when the key becomes due, and depth until a worker takes it", async () => {
    const { queue, value } = setup();
    queue.add("a");
    queue.add("a");
    queue.add("b");
    expect(await value("workqueue_adds_total")).to.equal(2);
    expect(await value("workqueue_depth")).to.equal(2);
    const key = await queue.get();
    expect(key).to.equal("a");
    expect(await value("workqueue_depth")).to.equal(1);
    // Re-added while processing: an add, and depth, although it is not ready until done().
    queue.add("a");
    expect(await value("workqueue_adds_total")).to.equal(3);
    expect(await value("workqueue_depth")).to.equal(2);
    expect(queue.depth).to.equal(1);
  });

  it("observes queue duration from the first add to the hand-out, and work duration to done", async () => {
    const { clock, queue, histogram, value } = setup();
    queue.add("a");
    await clock.advanceAsync(300);
    queue.add("a");
    await clock.advanceAsync(200);
    const key = (await queue.get()) as string;
    expect(await histogram("workqueue_queue_duration_seconds", "sum")).to.be.closeTo(0.5, 1e-9);
    await clock.advanceAsync(700);
    expect(await value("workqueue_unfinished_work_seconds")).to.be.closeTo(0.7, 1e-9);
    expect(await value("workqueue_longest_running_processor_seconds")).to.be.closeTo(0.7, 1e-9);
    queue.done(key);
    expect(await histogram("workqueue_work_duration_seconds", "sum")).to.be.closeTo(0.7, 1e-9);
    expect(await value("workqueue_unfinished_work_seconds")).to.equal(0);
  });

  it("counts a retry for every addAfter and addRateLimited, and an add when the delay has passed", async () => {
    const { clock, queue, value } = setup();
    queue.addAfter("a", 50);
    queue.addRateLimited("b");
    expect(await value("workqueue_retries_total")).to.equal(2);
    expect(await value("workqueue_adds_total")).to.equal(0);
    await clock.advanceAsync(100);
    expect(await value("workqueue_adds_total")).to.equal(2);
    expect(await value("workqueue_depth")).to.equal(2);
  });
});
