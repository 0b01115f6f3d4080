// EventLoopMonitor: reports lag when the loop is blocked and recovers afterwards. A blocked loop is the fake clock's
// block(): time passes and no timer fires until the next advance, late.

import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import { startEventLoopMonitor } from "../../../src/observe/event-loop-monitor.js";
import { FakeClock } from "../fake-clock.js";

describe("observe/event-loop-monitor", () => {
  it("is alive on an idle loop: each heartbeat on time, no lag", () => {
    const clock = new FakeClock();
    const monitor = startEventLoopMonitor({ intervalMs: 10, clock });
    try {
      clock.advance(50);
      expect(monitor.lagMs()).to.equal(0);
      expect(monitor.isAlive(0)).to.equal(true);
      expect(monitor.takeLagStatistics().count).to.equal(5);
    } finally {
      monitor.stop();
    }
  });

  it("sees a blocked loop, then recovers", () => {
    const clock = new FakeClock();
    const monitor = startEventLoopMonitor({ intervalMs: 10, clock });
    try {
      clock.block(150);
      // The overdue heartbeat is visible before the late timer has fired: due at 10, it is 150.
      expect(monitor.lagMs()).to.equal(140);
      expect(monitor.isAlive(139)).to.equal(false);
      expect(monitor.isAlive(140)).to.equal(true);
      clock.advance(0); // the late heartbeat fires: it measured 140 ms, the next is due 10 ms on
      expect(monitor.lagMs()).to.equal(140);
      clock.advance(10); // on time again
      expect(monitor.lagMs()).to.equal(0);
      expect(monitor.isAlive(0)).to.equal(true);
    } finally {
      monitor.stop();
    }
  });

  it("keeps the last measurement after stop(), and leaves no timer", () => {
    const clock = new FakeClock();
    const monitor = startEventLoopMonitor({ intervalMs: 10, clock });
    clock.block(25);
    clock.advance(0);
    monitor.stop();
    expect(clock.pendingTimers).to.equal(0);
    clock.block(1_000);
    expect(monitor.lagMs()).to.equal(15);
  });

  it("hands each heartbeat's delay to one reader, then starts afresh", () => {
    const clock = new FakeClock();
    const monitor = startEventLoopMonitor({ intervalMs: 10, clock });
    try {
      clock.block(120); // the first heartbeat, due at 10, fires at 120
      clock.advance(40); // then four on time (130 to 160)
      const taken = monitor.takeLagStatistics();
      expect(taken.count).to.equal(5);
      expect(taken.max).to.be.closeTo(0.11, 1e-3);
      expect(taken.min).to.be.at.most(taken.p50);
      expect(taken.p50).to.be.at.most(taken.max);
      clock.advance(20);
      const next = monitor.takeLagStatistics();
      expect(next.count).to.equal(2);
      expect(next.max, "the blocked beat was taken already").to.be.below(1e-6);
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

  it("on the system clock (the default), its heartbeat runs and the loop is alive", async () => {
    const monitor = startEventLoopMonitor({ intervalMs: 10 });
    try {
      // Generous: timers fire late on a busy machine; this is about the default clock being wired, not timing.
      for (let waited = 0; monitor.takeLagStatistics().count === 0 && waited < 5_000; waited += 20) await sleep(20);
      expect(monitor.isAlive(5_000)).to.equal(true);
    } finally {
      monitor.stop();
    }
  });
});
