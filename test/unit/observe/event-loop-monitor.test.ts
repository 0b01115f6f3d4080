// EventLoopMonitor: reports lag when the loop is blocked and recovers afterwards.

import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import { startEventLoopMonitor } from "../../../src/observe/event-loop-monitor.js";

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
      expect(monitor.isAlive(200)).to.equal(true);
      expect(monitor.lagMs()).to.be.below(200);
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
      await sleep(60);
      expect(monitor.isAlive(50)).to.equal(true);
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
});
