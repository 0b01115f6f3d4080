// TokenBucket: burst then pacing, reservations in arrival order, early askers keep their turn, cancel refunds.

import { expect } from "chai";
import fc from "fast-check";
import { TokenBucket } from "../../../src/safety/token-bucket.js";
import { FakeClock } from "../fake-clock.js";

const START = Date.parse("2025-03-04T10:00:00Z");

/** 60 a minute: one token a second. */
function bucket(burst: number, ratePerMinute = 60) {
  const clock = new FakeClock(START);
  return { clock, tokens: new TokenBucket({ ratePerMinute, burst, clock }) };
}

type Op = { kind: "take"; key: string } | { kind: "cancel"; key: string } | { kind: "advance"; ms: number };

const keyArb = fc.constantFrom("a", "b", "c", "d");
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("take" as const), key: keyArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("cancel" as const), key: keyArb }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("advance" as const), ms: fc.nat(5_000) }) },
);
// Small bursts and periods of 0.1 to 2 s against advances of up to 5 s: where pacing mistakes show.
const configArb = fc.record({
  burst: fc.integer({ min: 1, max: 3 }),
  ratePerMinute: fc.integer({ min: 30, max: 600 }),
});

/**
 * The largest number of grants inside any window, minus what burst + rate × window allows; > 0 is an overshoot.
 * Waits are whole milliseconds, rounded up from each slot's exact time, so a window may read up to 1 ms short.
 */
function worstOvershoot(
  grants: readonly number[],
  burst: number,
  ratePerMinute: number,
): { excess: number; at: string } {
  let worst = { excess: Number.NEGATIVE_INFINITY, at: "" };
  for (let i = 0; i < grants.length; i++) {
    for (let j = i; j < grants.length; j++) {
      const window = (grants[j] as number) - (grants[i] as number);
      const excess = j - i + 1 - (burst + (ratePerMinute / 60_000) * (window + 1));
      if (excess > worst.excess) worst = { excess, at: `${j - i + 1} grants in ${window} ms` };
    }
  }
  return worst;
}

function runOps(ops: readonly Op[], burst: number, ratePerMinute: number): number[] {
  const { clock, tokens } = bucket(burst, ratePerMinute);
  const grants: number[] = [];
  for (const op of ops) {
    if (op.kind === "take") {
      if (tokens.take(op.key) === 0) grants.push(clock.now());
    } else if (op.kind === "cancel") tokens.cancel(op.key);
    else clock.advance(op.ms);
  }
  return grants;
}

describe("safety/token-bucket", () => {
  it("grants the burst at once, then paces at the rate", () => {
    const { clock, tokens } = bucket(3);
    expect(["p1", "p2", "p3"].map((k) => tokens.take(k))).to.deep.equal([0, 0, 0]);
    expect(tokens.take("p4")).to.equal(1_000);
    clock.advance(1_000);
    expect(tokens.take("p4")).to.equal(0);
    expect(tokens.take("p5")).to.equal(1_000);
  });

  it("lets callers that come back on time delete one per period after the burst", () => {
    const { clock, tokens } = bucket(2, 30); // one every 2 s
    const due = new Map<string, number>();
    const deletedAt: number[] = [];
    for (let i = 0; i < 8; i++) {
      const wait = tokens.take(`p${i}`);
      if (wait === 0) deletedAt.push(clock.now());
      else due.set(`p${i}`, clock.now() + wait);
    }
    while (due.size > 0) {
      const [key, at] = [...due].reduce((a, b) => (b[1] < a[1] ? b : a));
      clock.advance(at - clock.now());
      expect(tokens.take(key)).to.equal(0);
      deletedAt.push(clock.now());
      due.delete(key);
    }
    expect(deletedAt.map((t) => t - START)).to.deep.equal([0, 0, 2_000, 4_000, 6_000, 8_000, 10_000, 12_000]);
  });

  it("refills while idle, but never beyond the burst", () => {
    const { clock, tokens } = bucket(2);
    tokens.take("a");
    tokens.take("b");
    clock.advance(60_000);
    expect(["c", "d"].map((k) => tokens.take(k))).to.deep.equal([0, 0]);
    expect(tokens.take("e")).to.equal(1_000);
  });

  it("reserves tokens in arrival order", () => {
    const { tokens } = bucket(1);
    tokens.take("first");
    const waits = ["w1", "w2", "w3", "w4"].map((k) => tokens.take(k));
    expect(waits).to.deep.equal([1_000, 2_000, 3_000, 4_000]);
  });

  it("rounds a fractional wait up to the next millisecond", () => {
    const { tokens } = bucket(1, 7); // one token every 8571.43 ms
    tokens.take("a");
    expect(tokens.take("b")).to.equal(8_572);
  });

  it("lets a key asking before its turn keep its place, without charging it again", () => {
    const { clock, tokens } = bucket(1);
    tokens.take("a");
    expect(tokens.take("b")).to.equal(1_000);
    expect(tokens.take("c")).to.equal(2_000);
    clock.advance(400);
    expect(tokens.take("b")).to.equal(600);
    expect(tokens.take("b")).to.equal(600);
    // b's repeated asks took nothing more: d queues right behind c.
    expect(tokens.take("d")).to.equal(2_600);
    clock.advance(600);
    expect(tokens.take("b")).to.equal(0);
    expect(tokens.take("c")).to.equal(1_000);
  });

  it("charges a key again once it has used its reserved token", () => {
    const { clock, tokens } = bucket(1);
    tokens.take("a");
    expect(tokens.take("b")).to.equal(1_000);
    clock.advance(1_000);
    expect(tokens.take("b")).to.equal(0);
    expect(tokens.take("b")).to.equal(1_000);
  });

  it("refunds a cancelled reservation to the next arrival", () => {
    const { tokens } = bucket(1);
    tokens.take("a");
    expect(tokens.take("b")).to.equal(1_000);
    tokens.cancel("b");
    expect(tokens.take("c")).to.equal(1_000);
    // b asking again is a new arrival, behind c.
    expect(tokens.take("b")).to.equal(2_000);
  });

  it("refunds nothing for a key that holds no reservation", () => {
    const { tokens } = bucket(1);
    expect(tokens.take("a")).to.equal(0);
    tokens.cancel("a");
    tokens.cancel("never-seen");
    expect(tokens.take("b")).to.equal(1_000);
  });

  it("refunds no more than the burst", () => {
    const { clock, tokens } = bucket(2);
    tokens.take("a");
    tokens.take("b");
    expect(tokens.take("c")).to.equal(1_000);
    clock.advance(10_000);
    tokens.cancel("c");
    expect(["d", "e"].map((k) => tokens.take(k))).to.deep.equal([0, 0]);
    expect(tokens.take("f")).to.equal(1_000);
  });

  it("never waits when the rate is 0 (no limit)", () => {
    const { tokens } = bucket(1, 0);
    expect(tokens.unlimited).to.equal(true);
    for (let i = 0; i < 1_000; i++) expect(tokens.take(`p${i % 3}`)).to.equal(0);
    tokens.cancel("p0");
    expect(tokens.take("p0")).to.equal(0);
    expect(bucket(1, 1).tokens.unlimited).to.equal(false);
  });

  it("property: a new arrival waits whole ms, at most one period per slot still ahead, plus its own", () => {
    fc.assert(
      fc.property(configArb, fc.array(opArb, { maxLength: 60 }), ({ burst, ratePerMinute }, ops) => {
        const { clock, tokens } = bucket(burst, ratePerMinute);
        // Slots handed out and still in the future. A cancelled slot counts until it passes: only the
        // last one handed out is given back, so an earlier cancelled slot may still delay newcomers.
        const reserved = new Map<string, number>();
        const cancelled: number[] = [];
        for (const op of ops) {
          if (op.kind === "take") {
            const slotsAhead = [...reserved.values(), ...cancelled].filter((due) => due > clock.now()).length;
            const own = reserved.get(op.key);
            const wait = tokens.take(op.key);
            expect(Number.isInteger(wait) && wait >= 0, `wait ${wait}`).to.equal(true);
            // A key coming back for its own slot is not a new arrival; one whose slot lapsed is.
            if (own === undefined || own <= clock.now()) {
              // +1 ms: the slot times are sums of a fractional interval, and a float sum can round up once more.
              expect(wait).to.be.at.most(Math.ceil(((slotsAhead + 1) * 60_000) / ratePerMinute) + 1);
            }
            if (wait > 0) reserved.set(op.key, clock.now() + wait);
            else reserved.delete(op.key);
          } else if (op.kind === "cancel") {
            tokens.cancel(op.key);
            const due = reserved.get(op.key);
            if (due !== undefined) cancelled.push(due);
            reserved.delete(op.key);
          } else clock.advance(op.ms);
        }
      }),
    );
  });

  it("property: callers that come back exactly on time never get more than burst + rate × window", () => {
    const arrivalsArb = fc.array(fc.record({ key: keyArb, gapMs: fc.nat(3_000) }), { maxLength: 40 });
    fc.assert(
      fc.property(configArb, arrivalsArb, ({ burst, ratePerMinute }, arrivals) => {
        const { clock, tokens } = bucket(burst, ratePerMinute);
        const due = new Map<string, number>();
        const grants: number[] = [];
        const serveDue = (until: number) => {
          for (;;) {
            const next = [...due].filter(([, at]) => at <= until).sort((a, b) => a[1] - b[1])[0];
            if (!next) break;
            clock.advance(next[1] - clock.now());
            expect(tokens.take(next[0])).to.equal(0);
            grants.push(clock.now());
            due.delete(next[0]);
          }
          clock.advance(until - clock.now());
        };
        for (const { key, gapMs } of arrivals) {
          serveDue(clock.now() + gapMs);
          const wait = tokens.take(key);
          if (wait === 0) grants.push(clock.now());
          else due.set(key, clock.now() + wait);
        }
        serveDue(Number.MAX_SAFE_INTEGER / 2);
        const worst = worstOvershoot(grants, burst, ratePerMinute);
        expect(worst.excess, worst.at).to.be.at.most(1e-9);
      }),
    );
  });

  // Two ways an earlier version overshot: a reservation claimed long after its slot (on top of a refilled
  // burst), and a cancel() refunding a slot that later reservations were lined up behind.
  describe("the pacing bound burst + rate × window", () => {
    it("holds over any sequence of take, cancel and advance (property)", () => {
      fc.assert(
        fc.property(configArb, fc.array(opArb, { maxLength: 40 }), ({ burst, ratePerMinute }, ops) => {
          const grants = runOps(ops, burst, ratePerMinute);
          const worst = worstOvershoot(grants, burst, ratePerMinute);
          expect(worst.excess, worst.at).to.be.at.most(1e-9);
        }),
        { numRuns: 1_000 },
      );
    });

    it("holds for the deletes that happened when skipped ones give their token back (property)", () => {
      type RefundOp = Op | { kind: "refund"; key: string };
      const withRefunds: fc.Arbitrary<RefundOp> = fc.oneof(
        { weight: 4, arbitrary: opArb },
        { weight: 1, arbitrary: fc.record({ kind: fc.constant("refund" as const), key: keyArb }) },
      );
      fc.assert(
        fc.property(configArb, fc.array(withRefunds, { maxLength: 40 }), ({ burst, ratePerMinute }, ops) => {
          const { clock, tokens } = bucket(burst, ratePerMinute);
          const deletes: (number | undefined)[] = [];
          const lastGrant = new Map<string, number>();
          for (const op of ops) {
            if (op.kind === "take") {
              if (tokens.take(op.key) === 0) lastGrant.set(op.key, deletes.push(clock.now()) - 1);
            } else if (op.kind === "refund") {
              // The DELETE deleted nothing (404, 409): its grant does not count, and the token goes back.
              const index = lastGrant.get(op.key);
              if (index === undefined) continue;
              tokens.refund(op.key);
              deletes[index] = undefined;
              lastGrant.delete(op.key);
            } else if (op.kind === "cancel") tokens.cancel(op.key);
            else clock.advance(op.ms);
          }
          const happened = deletes.filter((at): at is number => at !== undefined);
          const worst = worstOvershoot(happened, burst, ratePerMinute);
          expect(worst.excess, worst.at).to.be.at.most(1e-9);
        }),
        { numRuns: 1_000 },
      );
    });

    it("holds when a reserved key comes back late (today: burst 1, yet two grants at one instant)", () => {
      const grants = runOps(
        [
          { kind: "take", key: "a" }, // granted
          { kind: "take", key: "b" }, // reserved for +1 s
          { kind: "advance", ms: 10_000 }, // b is late; the bucket refills to the burst meanwhile
          { kind: "take", key: "c" }, // granted: the refilled token
          { kind: "take", key: "b" }, // granted too: its reservation
        ],
        1,
        60,
      );
      // Today: grants at 0 s, 10 s and 10 s.
      const worst = worstOvershoot(grants, 1, 60);
      expect(worst.excess, worst.at).to.be.at.most(0);
    });

    it("holds when the refunded take found the bucket refilled (fast-check seed 848392521)", () => {
      // 30 a minute, burst 2. b is granted on a full bucket, a 1,248 ms later; b's DELETE is refunded. Taking a
      // whole interval off the schedule gave a two more grants at 2,000 ms: three deletes in 752 ms.
      const { clock, tokens } = bucket(2, 30);
      const start = clock.now();
      const deletes: number[] = [];
      expect(tokens.take("b")).to.equal(0);
      clock.advance(1_248);
      expect(tokens.take("a")).to.equal(0);
      deletes.push(clock.now() - start);
      tokens.refund("b");
      clock.advance(752);
      for (const key of ["a", "c"]) if (tokens.take(key) === 0) deletes.push(clock.now() - start);
      expect(deletes).to.deep.equal([1_248, 2_000]);
      const worst = worstOvershoot(deletes, 2, 30);
      expect(worst.excess, worst.at).to.be.at.most(1e-9);
    });

    it("holds when a slot is claimed late and the next one on time (fast-check seed -1059308820)", () => {
      // 48 a minute: one token each 1,250 ms. Before: grants at 0, 1,654 and 2,500 ms (two in 846 ms).
      const alone = runOps(
        [
          { kind: "take", key: "a" },
          { kind: "take", key: "a" }, // reserved for 1,250 ms
          { kind: "advance", ms: 1_654 }, // claimed 404 ms late
          { kind: "take", key: "a" },
          { kind: "advance", ms: 846 },
          { kind: "take", key: "a" },
        ],
        1,
        48,
      );
      // Two holders in line: the first claims late, the second comes exactly at its own slot.
      const inLine = runOps(
        [
          { kind: "take", key: "a" }, // granted at 0 s
          { kind: "take", key: "b" }, // due at 1 s
          { kind: "take", key: "c" }, // due at 2 s
          { kind: "advance", ms: 1_900 },
          { kind: "take", key: "b" }, // 900 ms late
          { kind: "advance", ms: 100 },
          { kind: "take", key: "c" }, // on time by the old schedule: must wait
          { kind: "advance", ms: 900 },
          { kind: "take", key: "c" },
        ],
        1,
        60,
      );
      for (const [grants, rate] of [
        [alone, 48],
        [inLine, 60],
      ] as const) {
        const worst = worstOvershoot(grants, 1, rate);
        expect(worst.excess, worst.at).to.be.at.most(1e-9);
      }
      expect(inLine).to.have.length(3);
    });

    it("holds when a reservation ahead of others is cancelled (today: burst 1, yet two grants at one instant)", () => {
      const grants = runOps(
        [
          { kind: "take", key: "a" }, // granted at 0 s
          { kind: "take", key: "b" }, // due at 1 s
          { kind: "take", key: "c" }, // due at 2 s
          { kind: "cancel", key: "b" }, // refund: the count says one owed, but c still waits for 2 s
          { kind: "take", key: "d" }, // due at 2 s as well
          { kind: "advance", ms: 2_000 },
          { kind: "take", key: "c" },
          { kind: "take", key: "d" },
        ],
        1,
        60,
      );
      // Today: grants at 0 s, 2 s and 2 s.
      const worst = worstOvershoot(grants, 1, 60);
      expect(worst.excess, worst.at).to.be.at.most(0);
    });
  });
});
