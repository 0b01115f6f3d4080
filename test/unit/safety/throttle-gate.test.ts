// ThrottleGate: a throttled key waits out its Retry-After, measured on the injected clock; others never wait.
import { expect } from "chai";
import { ThrottleGate } from "../../../src/safety/throttle-gate.js";

describe("act/ThrottleGate", () => {
  let now = 1_000_000;
  const gate = () => new ThrottleGate(() => now);

  it("makes a throttled key wait exactly until its Retry-After has passed, then forgets it", () => {
    const throttle = gate();
    throttle.hold("ns/a", 3_000);
    expect(throttle.waitMs("ns/a")).to.equal(3_000);
    now += 2_999;
    expect(throttle.waitMs("ns/a")).to.equal(1);
    now += 1;
    expect(throttle.waitMs("ns/a")).to.equal(0);
    expect(throttle.size).to.equal(0);
  });

  it("never holds a key that was not throttled, and a later answer replaces an earlier one", () => {
    const throttle = gate();
    expect(throttle.waitMs("ns/b")).to.equal(0);
    throttle.hold("ns/b", 10_000);
    throttle.hold("ns/b", 2_000);
    expect(throttle.waitMs("ns/b")).to.equal(2_000);
    expect(throttle.waitMs("ns/c")).to.equal(0);
  });

  it("treats a Retry-After of 0 (or a date in the past) as free, and forgets a gone pod", () => {
    const throttle = gate();
    throttle.hold("ns/d", 0);
    expect(throttle.waitMs("ns/d")).to.equal(0);
    throttle.hold("ns/e", 5_000);
    throttle.forget("ns/e");
    expect(throttle.waitMs("ns/e")).to.equal(0);
  });
});
