// The manager's start and stop order (controller/manager.ts): workers and ticks only once every cache holds its
// first list; on stop, workers first, then the outbox, then the Lease, then the watches; a budget bounds the wait.
import { expect } from "chai";
import { Manager, type Outbox, type Runnable, type StopReport } from "../../../src/controller/manager.js";
import type { RunningCache } from "../../../src/informer/reflector.js";
import { collectingLogger, silentLogger } from "../../support/loggers.js";
import { FakeClock } from "../fake-clock.js";

/** A cache whose first list completes when the test says; runs until aborted, and notes when it stops. */
class HandCache implements RunningCache {
  synced = false;
  readonly name: string;
  readonly log: string[];
  readonly idleMs: number;
  #synced: (() => void)[] = [];

  constructor(name: string, log: string[], idleMs = 0) {
    this.name = name;
    this.log = log;
    this.idleMs = idleMs;
  }

  sync(): void {
    this.synced = true;
    for (const wake of this.#synced.splice(0)) wake();
  }

  async run(signal: AbortSignal): Promise<void> {
    await aborted(signal);
    this.log.push(`${this.name} stopped`);
  }

  waitForSync(signal: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    return new Promise((resolve) => {
      this.#synced.push(() => resolve(true));
      signal.addEventListener("abort", () => resolve(false), { once: true });
    });
  }
}

/** Runs until aborted, then takes `finishMs` to finish what it has in flight (never, when infinite). */
const runnable = (name: string, log: string[], finishMs = 0): Runnable & { started: boolean } => {
  const made = {
    started: false,
    async run(signal: AbortSignal) {
      made.started = true;
      log.push(`${name} started`);
      await aborted(signal);
      await after(finishMs);
      log.push(`${name} stopped`);
    },
  };
  return made;
};

const outbox = (log: string[], drainMs = 0): Outbox & { stoppedRetrying: boolean } => {
  const made = {
    stoppedRetrying: false,
    backlog: 0,
    async drain() {
      await after(drainMs);
      log.push("outbox drained");
    },
    stopRetrying() {
      made.stoppedRetrying = true;
    },
  };
  return made;
};

const aborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
/** Resolves after `ms`; never when infinite (no timer left behind to keep the test run alive). */
const after = (ms: number) =>
  new Promise<void>((resolve) => {
    if (Number.isFinite(ms)) setTimeout(resolve, ms);
  });
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

/** Starts the manager, then stop(budgetMs) in the background: `report` is set once it has stopped. */
async function startThenStop(manager: Manager, budgetMs: number) {
  manager.start();
  await tick();
  const stopping: { report: StopReport | undefined; done: Promise<StopReport> } = {
    report: undefined,
    done: manager.stop(budgetMs).then((report) => {
      stopping.report = report;
      return report;
    }),
  };
  return stopping;
}

describe("controller/manager", () => {
  it("starts the workers and the ticks only once every cache holds its first list", async () => {
    const log: string[] = [];
    const pods = new HandCache("pods", log);
    const nodes = new HandCache("nodes", log);
    const worker = runnable("worker", log);
    let ticks = 0;
    const manager = new Manager({
      reflectors: [pods, nodes],
      workers: [worker],
      ticks: [{ everyMs: 1, tick: () => ticks++ }],
      outbox: outbox(log),
      logger: silentLogger(),
    });
    manager.start();
    pods.sync();
    await tick();
    expect(manager.synced).to.equal(false);
    expect(worker.started, "a cache is still listing").to.equal(false);
    expect(ticks).to.equal(0);
    nodes.sync();
    await tick();
    expect(manager.synced).to.equal(true);
    expect(worker.started).to.equal(true);
    expect(ticks).to.be.above(0);
    await manager.stop();
  });

  it("startCaches: the caches list and watch, but neither the election nor a worker runs, synced or not, until start()", async () => {
    const log: string[] = [];
    const pods = new HandCache("pods", log);
    const election = runnable("election", log);
    const worker = runnable("worker", log);
    let ticks = 0;
    let runs = 0;
    const counted: RunningCache = {
      get synced() {
        return pods.synced;
      },
      idleMs: 0,
      run: async (signal) => {
        runs++;
        await pods.run(signal);
      },
      waitForSync: (signal) => pods.waitForSync(signal),
    };
    const manager = new Manager({
      reflectors: [counted],
      elector: election,
      workers: [worker],
      ticks: [{ everyMs: 1, tick: () => ticks++ }],
      outbox: outbox(log),
      logger: silentLogger(),
    });
    manager.startCaches();
    pods.sync();
    await tick();
    expect(manager.synced).to.equal(true);
    expect(runs).to.equal(1);
    expect([election.started, worker.started, ticks]).to.deep.equal([false, false, 0]);
    manager.start();
    await tick();
    expect(runs, "start() does not list again").to.equal(1);
    expect([election.started, worker.started]).to.deep.equal([true, true]);
    await manager.stop();
    expect(log).to.include("pods stopped");
  });

  it("stop() after startCaches() alone ends the watches (run gives up on a failed check)", async () => {
    const log: string[] = [];
    const pods = new HandCache("pods", log);
    const worker = runnable("worker", log);
    const manager = new Manager({
      reflectors: [pods],
      workers: [worker],
      ticks: [],
      outbox: outbox(log),
      logger: silentLogger(),
    });
    manager.startCaches();
    await tick();
    const report = await manager.stop();
    expect(report).to.deep.equal({ workersStopped: true, outboxDrained: true, watchesStopped: true });
    expect(worker.started).to.equal(false);
    expect(log).to.include("pods stopped");
  });

  it("stops in reverse: workers, then the outbox, then the election, then the watches", async () => {
    const log: string[] = [];
    const cache = new HandCache("watch", log);
    cache.sync();
    const manager = new Manager({
      reflectors: [cache],
      elector: runnable("election", log),
      workers: [runnable("worker", log, 20)],
      ticks: [],
      outbox: outbox(log, 20),
      logger: silentLogger(),
    });
    manager.start();
    await tick();
    const report = await manager.stop();
    expect(report).to.deep.equal({ workersStopped: true, outboxDrained: true, watchesStopped: true });
    expect(log.filter((line) => line.endsWith("stopped") || line.endsWith("drained"))).to.deep.equal([
      "worker stopped",
      "outbox drained",
      "election stopped",
      "watch stopped",
    ]);
  });

  it("past the budget, stops waiting for workers and Events: the outbox stops retrying and the rest stops anyway", async () => {
    const log: string[] = [];
    const cache = new HandCache("watch", log);
    cache.sync();
    const events = outbox(log, Number.POSITIVE_INFINITY);
    const clock = new FakeClock();
    const manager = new Manager({
      reflectors: [cache],
      workers: [runnable("worker", log, Number.POSITIVE_INFINITY)],
      ticks: [],
      outbox: events,
      logger: silentLogger(),
      clock,
    });
    const stopping = await startThenStop(manager, 50);
    await clock.advanceAsync(49);
    expect(stopping.report, "1 ms before the budget: still waiting").to.equal(undefined);
    expect(events.stoppedRetrying).to.equal(false);
    await clock.advanceAsync(1);
    const report = await stopping.done;
    expect(report).to.deep.equal({ workersStopped: false, outboxDrained: false, watchesStopped: true });
    expect(events.stoppedRetrying).to.equal(true);
    expect(log).to.include("watch stopped");
  });

  it("a watch deaf to its stop signal holds shutdown up 5 s at most, with a warning", async () => {
    const log: string[] = [];
    const deaf: RunningCache = {
      synced: true,
      idleMs: 0,
      run: () => new Promise<void>(() => {}),
      waitForSync: async () => true,
    };
    const pods = new HandCache("pods", log);
    pods.sync();
    const logger = collectingLogger();
    const clock = new FakeClock();
    const manager = new Manager({
      reflectors: [deaf, pods],
      workers: [],
      ticks: [],
      outbox: outbox(log),
      logger: logger.logger,
      clock,
    });
    const stopping = await startThenStop(manager, 50);
    // The workers and the outbox are done at once; then only the deaf watch is waited for.
    await tick();
    await clock.advanceAsync(4_999);
    expect(stopping.report, "1 ms before the watches' 5 s: still waiting").to.equal(undefined);
    await clock.advanceAsync(1);
    const report = await stopping.done;
    expect(report).to.deep.equal({ workersStopped: true, outboxDrained: true, watchesStopped: false });
    expect(log).to.include("pods stopped");
    expect(logger.lines.join("\n")).to.include("a watch did not end within 5 s of being stopped");
  });

  it("reports the cache that has heard from the API server least recently", () => {
    const log: string[] = [];
    const manager = new Manager({
      reflectors: [new HandCache("pods", log, 100), new HandCache("nodes", log, 5_000)],
      workers: [],
      ticks: [],
      outbox: outbox(log),
      logger: silentLogger(),
    });
    expect(manager.idleMs).to.equal(5_000);
  });
});
