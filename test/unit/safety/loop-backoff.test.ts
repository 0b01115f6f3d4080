// LoopBackoff: a broken replacement on the same node waits base × 2^(n-1), capped; siblings and quiet owners do not.

import { expect } from "chai";
import fc from "fast-check";
import type { PodFacts } from "../../../src/detect/facts.js";
import { LoopBackoff } from "../../../src/safety/loop-backoff.js";
import { uniquePod } from "../../support/pod-builders.js";
import { FakeClock } from "../fake-clock.js";

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
// 700 ms into a second: creationTimestamp (whole seconds) of a pod made in the same second reads 10:20:00.
const START = Date.parse("2025-03-04T10:20:00.700Z");
const OWNER = { kind: "ReplicaSet", name: "reviews-7d9f8b6c5", uid: "owner-1" };

/** A pod of OWNER on node-a, created at `createdAtMs` (whole seconds, as the API server reports it). */
const replica = (createdAtMs: number | undefined, overrides: Partial<PodFacts> = {}): PodFacts =>
  uniquePod(
    {
      nodeName: "node-a",
      owner: OWNER,
      createdAtMs: createdAtMs === undefined ? undefined : Math.floor(createdAtMs / 1000) * 1000,
      ...overrides,
    },
    "reviews-7d9f8b6c5",
  );

function setup(baseMs = MINUTE, maxMs = 8 * MINUTE) {
  const clock = new FakeClock(START);
  return { clock, loop: new LoopBackoff({ baseMs, maxMs, clock }) };
}

describe("safety/loop-backoff", () => {
  it("says nothing before any deletion", () => {
    const { clock, loop } = setup();
    expect(loop.check(replica(clock.now()))).to.equal(undefined);
  });

  it("holds a broken replacement for the base time after the first delete, then lets it go", () => {
    const { clock, loop } = setup();
    loop.recordDeletion(replica(START - 10 * MINUTE));
    clock.advance(5 * SECOND);
    const replacement = replica(clock.now());
    expect(loop.check(replacement)).to.deep.equal({ waitMs: 55 * SECOND, deletions: 1, lastDeletionAgoMs: 5 * SECOND });
    clock.advance(55 * SECOND);
    expect(loop.check(replacement)).to.deep.equal({ waitMs: 0, deletions: 1, lastDeletionAgoMs: MINUTE });
  });

  it("doubles the wait with each repeat and caps it at the maximum", () => {
    const { clock, loop } = setup(MINUTE, 5 * MINUTE);
    let current = replica(START - MINUTE);
    const waits: number[] = [];
    for (let n = 1; n <= 6; n++) {
      loop.recordDeletion(current);
      current = replica(clock.now());
      const check = loop.check(current);
      expect(check?.deletions).to.equal(n);
      waits.push(check?.waitMs ?? -1);
      clock.advance(check?.waitMs ?? 0);
    }
    expect(waits).to.deep.equal([1, 2, 4, 5, 5, 5].map((m) => m * MINUTE));
  });

  it("does not hold siblings that were there before the delete", () => {
    const { clock, loop } = setup();
    const sibling = replica(START - 2 * SECOND);
    loop.recordDeletion(replica(START - MINUTE));
    clock.advance(SECOND);
    expect(loop.check(sibling)).to.equal(undefined);
  });

  it("counts a replacement created in the same second as the delete, though its timestamp reads earlier", () => {
    const { loop } = setup();
    loop.recordDeletion(replica(START - MINUTE));
    // Created at 10:20:00.9, reported as 10:20:00: before the delete at 10:20:00.7 by the numbers.
    const sameSecond = replica(START + 200);
    expect(sameSecond.createdAtMs).to.be.below(START);
    expect(loop.check(sameSecond)).to.include({ deletions: 1, waitMs: MINUTE });
    // A second earlier is a sibling.
    expect(loop.check(replica(START - SECOND))).to.equal(undefined);
  });

  it("never holds the very pod it deleted", () => {
    const { clock, loop } = setup();
    const deleted = replica(START);
    loop.recordDeletion(deleted);
    clock.advance(SECOND);
    expect(loop.check(deleted)).to.equal(undefined);
  });

  it("keeps owners and nodes apart", () => {
    const { clock, loop } = setup();
    loop.recordDeletion(replica(START - MINUTE));
    clock.advance(SECOND);
    expect(loop.check(replica(clock.now(), { nodeName: "node-b" }))).to.equal(undefined);
    expect(loop.check(replica(clock.now(), { owner: { ...OWNER, uid: "owner-2" } }))).to.equal(undefined);
    expect(loop.check(replica(clock.now()))).to.not.equal(undefined);
  });

  it("ignores bare pods and pods without a creation time", () => {
    const { clock, loop } = setup();
    loop.recordDeletion(replica(START - MINUTE, { owner: undefined }));
    clock.advance(SECOND);
    expect(loop.check(replica(clock.now(), { owner: undefined }))).to.equal(undefined);
    loop.recordDeletion(replica(START - MINUTE));
    expect(loop.check(replica(undefined))).to.equal(undefined);
  });

  it("forgets the loop after a quiet period of twice the maximum", () => {
    const { clock, loop } = setup(MINUTE, 4 * MINUTE);
    loop.recordDeletion(replica(START - MINUTE));
    clock.advance(MINUTE);
    loop.recordDeletion(replica(START));
    const late = replica(clock.now());
    clock.advance(8 * MINUTE);
    expect(loop.check(late)).to.include({ deletions: 2, waitMs: 0 });
    clock.advance(1);
    expect(loop.check(late)).to.equal(undefined);
    // Counting starts afresh: the next delete is #1 again, with the base wait.
    loop.recordDeletion(late);
    expect(loop.check(replica(clock.now()))).to.include({ deletions: 1, waitMs: MINUTE });
  });

  it("starts afresh when the next delete comes after the quiet period, even unchecked", () => {
    const { clock, loop } = setup(MINUTE, 4 * MINUTE);
    loop.recordDeletion(replica(START - MINUTE));
    clock.advance(8 * MINUTE + 1);
    loop.recordDeletion(replica(START));
    expect(loop.check(replica(clock.now()))).to.include({ deletions: 1, waitMs: MINUTE });
  });

  it("property: back-to-back repeats wait min(max, base × 2^(n-1)) from each delete", () => {
    const argsArb = fc.record({
      baseMs: fc.integer({ min: SECOND, max: 10 * MINUTE }),
      factor: fc.integer({ min: 1, max: 64 }),
      repeats: fc.integer({ min: 1, max: 12 }),
      checkAfterMs: fc.nat(10 * MINUTE),
    });
    fc.assert(
      fc.property(argsArb, ({ baseMs, factor, repeats, checkAfterMs }) => {
        const maxMs = baseMs * factor;
        const { clock, loop } = setup(baseMs, maxMs);
        let current = replica(START - MINUTE);
        for (let n = 1; n <= repeats; n++) {
          loop.recordDeletion(current);
          current = replica(clock.now());
          const backoff = Math.min(maxMs, baseMs * 2 ** (n - 1));
          expect(loop.check(current)).to.deep.equal({ waitMs: backoff, deletions: n, lastDeletionAgoMs: 0 });
          clock.advance(backoff);
        }
        clock.advance(checkAfterMs);
        const last = Math.min(maxMs, baseMs * 2 ** (repeats - 1));
        const ago = last + checkAfterMs;
        const expected =
          ago > 2 * maxMs ? undefined : { waitMs: Math.max(0, last - ago), deletions: repeats, lastDeletionAgoMs: ago };
        expect(loop.check(current)).to.deep.equal(expected);
      }),
    );
  });
});
