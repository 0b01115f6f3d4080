// The stall watchdog fires once the timeout passed with no arm() since, however often it was armed before.
import { expect } from "chai";
import { StallWatchdog } from "../../../src/informer/stall-watchdog.js";
import { FakeClock } from "../fake-clock.js";

describe("StallWatchdog", () => {
  it("fires when no byte comes for the timeout after the last arm, not a millisecond before", () => {
    const clock = new FakeClock();
    const watchdog = new StallWatchdog(60, clock);
    try {
      watchdog.arm();
      clock.advance(59);
      expect(watchdog.stalled).to.equal(false);
      expect(watchdog.signal.aborted).to.equal(false);
      clock.advance(1);
      expect(watchdog.stalled).to.equal(true);
      expect(watchdog.signal.aborted).to.equal(true);
    } finally {
      watchdog.dispose();
    }
  });

  it("does not fire while bytes keep coming, and measures the timeout from the last one", () => {
    const clock = new FakeClock();
    const watchdog = new StallWatchdog(80, clock);
    try {
      watchdog.arm();
      clock.advance(60);
      watchdog.arm();
      clock.advance(20);
      expect(watchdog.stalled, "the first timer fired at 80; a byte came at 60").to.equal(false);
      expect(clock.pendingTimers, "one timer, for what is left").to.equal(1);
      clock.advance(59);
      expect(watchdog.stalled, "1 ms short of 60 + 80").to.equal(false);
      clock.advance(1);
      expect(watchdog.stalled).to.equal(true);
      expect(watchdog.signal.aborted).to.equal(true);
    } finally {
      watchdog.dispose();
    }
  });

  it("keeps one timer however often it is armed (arming only notes the time)", () => {
    const clock = new FakeClock();
    const watchdog = new StallWatchdog(80, clock);
    try {
      for (let i = 0; i < 10; i++) {
        watchdog.arm();
        clock.advance(5);
      }
      expect(clock.pendingTimers).to.equal(1);
    } finally {
      watchdog.dispose();
    }
  });

  it("aborts without a stall when disposed, and arming after that starts nothing", () => {
    const clock = new FakeClock();
    const watchdog = new StallWatchdog(20, clock);
    watchdog.arm();
    watchdog.dispose();
    watchdog.arm();
    expect(clock.pendingTimers, "no timer left").to.equal(0);
    clock.advance(60);
    expect(watchdog.signal.aborted).to.equal(true);
    expect(watchdog.stalled).to.equal(false);
  });
});
