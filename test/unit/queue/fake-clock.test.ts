// Tests for FakeClock: timers fire in due order, only when time is advanced past them.

import { expect } from "chai";
import fc from "fast-check";
import { FakeClock } from "../fake-clock.js";

describe("FakeClock", () => {
  it("starts at the given time and moves only on advance", () => {
    const clock = new FakeClock(1000);
    expect(clock.now()).to.equal(1000);
    clock.advance(250);
    expect(clock.now()).to.equal(1250);
  });

  it("fires due timers in time order, ties in scheduling order, and leaves later ones pending", () => {
    const clock = new FakeClock();
    const fired: string[] = [];
    clock.setTimeout(() => fired.push("c@30"), 30);
    clock.setTimeout(() => fired.push("a@10"), 10);
    clock.setTimeout(() => fired.push("b@10"), 10);
    clock.setTimeout(() => fired.push("d@100"), 100);
    expect(clock.pendingTimers).to.equal(4);
    expect(clock.nextDue).to.equal(10);
    clock.advance(30);
    expect(fired).to.deep.equal(["a@10", "b@10", "c@30"]);
    expect(clock.pendingTimers).to.equal(1);
    expect(clock.nextDue).to.equal(100);
  });

  it("shows each timer's due time as now() inside its callback", () => {
    const clock = new FakeClock(5);
    const seen: number[] = [];
    clock.setTimeout(() => seen.push(clock.now()), 7);
    clock.setTimeout(() => seen.push(clock.now()), 3);
    clock.advance(100);
    expect(seen).to.deep.equal([8, 12]);
    expect(clock.now()).to.equal(105);
  });

  it("fires timers scheduled by callbacks when they fall inside the window", () => {
    const clock = new FakeClock();
    const fired: number[] = [];
    const tick = () => {
      fired.push(clock.now());
      clock.setTimeout(tick, 10);
    };
    clock.setTimeout(tick, 10);
    clock.advance(35);
    expect(fired).to.deep.equal([10, 20, 30]);
    expect(clock.pendingTimers).to.equal(1);
    expect(clock.nextDue).to.equal(40);
  });

  it("fires zero, negative and NaN delays on advance(0)", () => {
    const clock = new FakeClock();
    let count = 0;
    for (const delay of [0, -5, Number.NaN]) clock.setTimeout(() => count++, delay);
    clock.advance(0);
    expect(count).to.equal(3);
  });

  it("does not fire cleared timers and ignores unknown handles", () => {
    const clock = new FakeClock();
    let fired = false;
    const handle = clock.setTimeout(() => {
      fired = true;
    }, 5);
    clock.clearTimeout(handle);
    clock.clearTimeout(handle);
    clock.clearTimeout({ id: "not ours" });
    expect(clock.pendingTimers).to.equal(0);
    clock.advance(10);
    expect(fired).to.equal(false);
  });

  it("lets a callback clear a later timer within the same advance", () => {
    const clock = new FakeClock();
    let laterFired = false;
    const later = clock.setTimeout(() => {
      laterFired = true;
    }, 20);
    clock.setTimeout(() => clock.clearTimeout(later), 10);
    clock.advance(30);
    expect(laterFired).to.equal(false);
  });

  it("rejects negative advances and re-entrant advance", () => {
    const clock = new FakeClock();
    expect(() => clock.advance(-1)).to.throw(RangeError);
    expect(() => clock.advance(Number.NaN)).to.throw(RangeError);
    clock.setTimeout(() => clock.advance(1), 1);
    expect(() => clock.advance(5)).to.throw(/re-entrant/);
    // The guard is released after the throw.
    clock.advance(1);
  });

  it("block moves time without firing; the overdue timers fire late on the next advance", () => {
    const clock = new FakeClock();
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(clock.monotonic()), 10);
    clock.block(150);
    expect(fired).to.deep.equal([]);
    expect(clock.monotonic()).to.equal(150);
    clock.advance(0);
    expect(fired).to.deep.equal([150]);
    expect(() => clock.block(-1)).to.throw(RangeError);
  });

  it("advanceAsync runs promise continuations between timers", async () => {
    const clock = new FakeClock();
    const sleep = (ms: number) => new Promise<void>((resolve) => clock.setTimeout(resolve, ms));
    const stamps: number[] = [];
    const loop = (async () => {
      for (let i = 0; i < 3; i++) {
        await sleep(10);
        stamps.push(clock.now());
      }
    })();
    await clock.advanceAsync(30);
    await loop;
    expect(stamps).to.deep.equal([10, 20, 30]);
  });

  it("property: fires exactly the timers due by the target, in non-decreasing due order", () => {
    fc.assert(
      fc.property(fc.array(fc.nat(1000), { maxLength: 40 }), fc.nat(1000), (delays, step) => {
        const clock = new FakeClock();
        const fired: number[] = [];
        for (const delay of delays) clock.setTimeout(() => fired.push(clock.now()), delay);
        clock.advance(step);
        const expected = delays.filter((d) => d <= step).sort((a, b) => a - b);
        expect(fired).to.deep.equal(expected);
        expect(clock.pendingTimers).to.equal(delays.length - expected.length);
      }),
    );
  });
});
