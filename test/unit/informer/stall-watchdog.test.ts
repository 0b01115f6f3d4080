// The stall watchdog fires once the timeout passed with no arm() since, however often it was armed before.
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import { StallWatchdog } from "../../../src/informer/stall-watchdog.js";

describe("StallWatchdog", () => {
  it("fires when no byte comes for the timeout after the last arm", async () => {
    const watchdog = new StallWatchdog(60);
    try {
      watchdog.arm();
      await sleep(100);
      expect(watchdog.stalled).to.equal(true);
      expect(watchdog.signal.aborted).to.equal(true);
    } finally {
      watchdog.dispose();
    }
  });

  it("does not fire while bytes keep coming, and measures the timeout from the last one", async () => {
    let now = 0;
    const watchdog = new StallWatchdog(80, () => now);
    try {
      watchdog.arm();
      // The first timer fires at 80 ms of real time; by then the clock says a byte came at 60.
      now = 60;
      watchdog.arm();
      await sleep(120);
      expect(watchdog.stalled, "60 + 80 > 60 on the clock given").to.equal(false);
      now = 139;
      await sleep(120);
      expect(watchdog.stalled, "1 ms short of the deadline").to.equal(false);
      now = 140;
      await sleep(60);
      expect(watchdog.stalled).to.equal(true);
      expect(watchdog.signal.aborted).to.equal(true);
    } finally {
      watchdog.dispose();
    }
  });

  it("aborts without a stall when disposed, and arming after that starts nothing", async () => {
    const watchdog = new StallWatchdog(20);
    watchdog.arm();
    watchdog.dispose();
    watchdog.arm();
    await sleep(60);
    expect(watchdog.signal.aborted).to.equal(true);
    expect(watchdog.stalled).to.equal(false);
  });
});
