// Tests for capped exponential backoff: growth, cap, jitter bounds and the stateful counter.

import { expect } from "chai";
import fc from "fast-check";
import { Backoff, type BackoffPolicy, backoffDelay } from "../../../src/util/backoff.js";

const policyArb: fc.Arbitrary<BackoffPolicy> = fc.record({
  baseMs: fc.double({ min: 0, max: 1e7, noNaN: true }),
  maxMs: fc.double({ min: 0, max: 1e9, noNaN: true }),
  factor: fc.double({ min: 1, max: 10, noNaN: true }),
  jitter: fc.double({ min: 0, max: 1, noNaN: true }),
});

describe("backoffDelay", () => {
  it("grows by the factor from baseMs and stops at maxMs without jitter", () => {
    const policy = { baseMs: 100, maxMs: 1000, factor: 3 };
    expect([0, 1, 2, 3, 4, 50].map((n) => backoffDelay(policy, n))).to.deep.equal([100, 300, 900, 1000, 1000, 1000]);
  });

  it("defaults to factor 2 and no jitter", () => {
    const policy = { baseMs: 5, maxMs: 1_000_000 };
    expect(backoffDelay(policy, 3, () => 0)).to.equal(40);
  });

  it("full jitter spans [0, d] and equal jitter spans [d/2, d]", () => {
    const full = { baseMs: 100, maxMs: 1000, jitter: 1 };
    expect(backoffDelay(full, 1, () => 0)).to.equal(0);
    expect(backoffDelay(full, 1, () => 0.5)).to.equal(100);
    const equal = { baseMs: 100, maxMs: 1000, jitter: 0.5 };
    expect(backoffDelay(equal, 1, () => 0)).to.equal(100);
    expect(backoffDelay(equal, 1, () => 1)).to.equal(200);
  });

  it("treats negative or NaN attempts as the first, and an infinite one as capped", () => {
    const policy = { baseMs: 10, maxMs: 100 };
    for (const n of [-1, Number.NaN, Number.NEGATIVE_INFINITY]) expect(backoffDelay(policy, n)).to.equal(10);
    expect(backoffDelay(policy, Number.POSITIVE_INFINITY)).to.equal(100);
    expect(backoffDelay({ ...policy, factor: 1 }, Number.POSITIVE_INFINITY)).to.equal(10);
  });

  it("rejects nonsensical policies", () => {
    const bad: BackoffPolicy[] = [
      { baseMs: -1, maxMs: 10 },
      { baseMs: 1, maxMs: Number.NaN },
      { baseMs: 1, maxMs: Number.POSITIVE_INFINITY },
      { baseMs: 1, maxMs: 10, factor: 0.5 },
      { baseMs: 1, maxMs: 10, jitter: 1.5 },
      { baseMs: 1, maxMs: 10, jitter: Number.NaN },
    ];
    for (const policy of bad) expect(() => backoffDelay(policy, 0), JSON.stringify(policy)).to.throw(RangeError);
  });

  it("property: always within [0, maxMs], whatever the attempt and random source", () => {
    fc.assert(
      fc.property(
        policyArb,
        fc.oneof(fc.integer({ min: -10, max: 10_000 }), fc.double()),
        fc.oneof(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), fc.double()),
        (policy, attempt, r) => {
          const delay = backoffDelay(policy, attempt, () => r);
          expect(delay).to.be.at.least(0);
          expect(delay).to.be.at.most(policy.maxMs);
        },
      ),
    );
  });

  it("property: jitter only ever shortens the un-jittered delay, by at most the jitter fraction", () => {
    fc.assert(
      fc.property(policyArb, fc.nat(200), fc.double({ min: 0, max: 1, noNaN: true }), (policy, attempt, r) => {
        const plain = backoffDelay({ ...policy, jitter: 0 }, attempt);
        const jittered = backoffDelay(policy, attempt, () => r);
        const slack = 1e-9 * Math.max(1, plain);
        expect(jittered).to.be.at.most(plain + slack);
        expect(jittered).to.be.at.least(plain * (1 - (policy.jitter ?? 0)) - slack);
      }),
    );
  });

  it("property: without jitter the delay never shrinks as attempts grow", () => {
    fc.assert(
      fc.property(policyArb, fc.nat(200), (policy, attempt) => {
        const plain = { ...policy, jitter: 0 };
        expect(backoffDelay(plain, attempt + 1)).to.be.at.least(backoffDelay(plain, attempt));
      }),
    );
  });
});

describe("Backoff", () => {
  it("counts attempts, grows, and starts over after reset", () => {
    const backoff = new Backoff({ baseMs: 10, maxMs: 50 });
    expect(backoff.attempts).to.equal(0);
    expect([backoff.next(), backoff.next(), backoff.next(), backoff.next()]).to.deep.equal([10, 20, 40, 50]);
    expect(backoff.attempts).to.equal(4);
    backoff.reset();
    expect(backoff.attempts).to.equal(0);
    expect(backoff.next()).to.equal(10);
  });

  it("uses the injected random source for jitter", () => {
    const backoff = new Backoff({ baseMs: 100, maxMs: 1000, jitter: 1 }, () => 0.25);
    expect(backoff.next()).to.equal(25);
  });

  it("rejects a bad policy up front", () => {
    expect(() => new Backoff({ baseMs: 1, maxMs: -1 })).to.throw(RangeError);
  });
});
