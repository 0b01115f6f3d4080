// waitFor is done on `true` or an object only: a check that returns 0, "" or an empty list must not end the wait.
import { inspect } from "node:util";
import { expect } from "chai";
import { type Done, GiveUp, type NotYet, waitFor } from "../../harness/wait.js";

const FAST = { timeoutMs: 200, intervalMs: 5 };

/** Answers the given values in turn, the last one for ever. */
const answers = (...values: unknown[]) => {
  let calls = 0;
  const check = () => values[Math.min(calls++, values.length - 1)] as Done | NotYet;
  return { check, calls: () => calls };
};

describe("harness/waitFor", () => {
  it("keeps polling through false, undefined and null, and returns true", async () => {
    const { check, calls } = answers(false, undefined, null, true);
    expect(await waitFor("true", check, FAST)).to.equal(true);
    expect(calls()).to.equal(4);
  });

  it("returns the object a check found", async () => {
    const found = { name: "pod-a" };
    expect(await waitFor("an object", answers(undefined, found).check, FAST)).to.equal(found);
  });

  for (const value of [0, 3, "", "text", Number.NaN, [], ["a"]]) {
    it(`refuses ${inspect(value)} at once, naming it, instead of treating it as done or not yet`, async () => {
      const { check, calls } = answers(value);
      const error = await waitFor("a number", check, FAST).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(GiveUp);
      expect(String(error)).to.include("the check for a number returned");
      expect(calls()).to.equal(1);
    });
  }

  it("times out while the check says not yet", async () => {
    const started = performance.now();
    const error = await waitFor("never", () => false, FAST).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String(error)).to.include("timed out after 200 ms waiting for never");
    expect(performance.now() - started).to.be.at.least(200);
  });
});
