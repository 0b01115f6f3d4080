// EventLoopMonitor: reports lag when the loop is blocked and recovers afterwards.

import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import { startEventLoopMonitor } from "../../../src/observe/event-loop-monitor.js";

/** Waits, up to a generous deadline, for the monitor to see a live loop again (timers fire late on a busy machine). */
async function aliveWithin(monitor: { isAlive(ms: number): boolean }, maxAgeMs: number): Promise<boolean> {
  const deadline = Date.now() + 5_000;
  while (!monitor.isAlive(maxAgeMs) && Date.now() < deadline) await sleep(10);
  return monitor.isAlive(maxAgeMs);
}

function blockFor(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // Busy-wait: nothing else may run.
  }
}

describe("observe/event-loop-monitor", () => {
  it("is alive on an idle loop", async () => {
    const monitor = startEventLoopMonitor({ intervalMs: 10 });
    try {
      await sleep(50);
      expect(await aliveWithin(monitor, 200)).to.equal(true);
    } finally {
      monitor.stop();
    }
  });

  it("sees a blocked loop, then recovers", async () => {
    const monitor = startEventLoopMonitor({ intervalMs: 10 });
    try {
      blockFor(150);
      // Overdue heartbeat is visible even before the late timer has fired.
      expect(monitor.lagMs()).to.be.at.least(100);
      expect(monitor.isAlive(50)).to.equal(false);
      expect(await aliveWithin(monitor, 50)).to.equal(true);
    } finally {
      monitor.stop();
    }
  });

  it("keeps the last measurement after stop()", async () => {
    const monitor = startEventLoopMonitor({ intervalMs: 10 });
    await sleep(30);
    monitor.stop();
    const lag = monitor.lagMs();
    await sleep(30);
    expect(monitor.lagMs()).to.equal(lag);
  });

  it("hands each heartbeat's delay to one reader, then starts afresh", async () => {
    const monitor = startEventLoopMonitor({ intervalMs: 10 });
    try {
      blockFor(120);
      await sleep(40);
      const taken = monitor.takeLagStatistics();
      expect(taken.count).to.be.at.least(1);
      expect(taken.max).to.be.at.least(0.1);
      expect(taken.min).to.be.at.most(taken.p50);
      expect(taken.p50).to.be.at.most(taken.max);
      const next = monitor.takeLagStatistics();
      expect(next.max, "the blocked beat was taken already").to.be.below(0.1);
    } finally {
      monitor.stop();
    }
  });

  it("reports zeros, not the empty histogram's sentinels, when no heartbeat came", () => {
    const monitor = startEventLoopMonitor({ intervalMs: 60_000 });
    monitor.stop();
    expect(monitor.takeLagStatistics()).to.deep.equal({
      count: 0,
      min: 0,
      max: 0,
      mean: 0,
      stddev: 0,
      p50: 0,
      p90: 0,
      p99: 0,
    });
  });
});
