// LeaderElector against an in-memory Lease on fake time: acquire, expiry by observation, renew, step-down, release.
import { expect } from "chai";
import { microTime } from "../../../src/election/lease-record.js";
import type { Clock } from "../../../src/util/clock.js";
import { ElectionFixture, START } from "./election-fixture.js";

const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

describe("LeaderElector", () => {
  let f: ElectionFixture;

  beforeEach(() => {
    f = new ElectionFixture();
  });

  afterEach(async () => {
    await f.close();
  });

  describe("acquiring", () => {
    it("creates a missing lease and leads", async () => {
      const me = await f.start("me");
      expect(me.elector.isLeader).to.equal(true);
      expect(me.elector.term, "the first term").to.equal(1);
      expect(me.changes).to.deep.equal([true]);
      expect(f.api.spec).to.include({ holderIdentity: "me", leaseDurationSeconds: 15, leaseTransitions: 0 });
      expect(f.api.spec.renewTime).to.match(MICRO_TIME).and.equal(microTime(START));
      expect(f.api.spec.acquireTime).to.equal(microTime(START));
    });

    it("waits out the lease duration from when it saw the record change, not from the remote renewTime", async () => {
      // A renewTime from long ago would look expired to anyone comparing it with their own clock.
      f.api.write({ holderIdentity: "other", leaseDurationSeconds: 15, renewTime: microTime(0), leaseTransitions: 3 });
      const me = await f.start("me");
      await f.advance(14_900);
      expect(me.elector.isLeader).to.equal(false);
      expect(me.elector.holder).to.equal("other");
      await f.advance(4_600); // past expiry, plus the longest jittered retry (2.2 × 2 s)
      expect(me.elector.isLeader).to.equal(true);
      expect(f.api.spec).to.include({ holderIdentity: "me", leaseTransitions: 4 });
    });

    it("never takes a lease whose holder keeps renewing it", async () => {
      f.api.write({ holderIdentity: "other", leaseDurationSeconds: 15, renewTime: microTime(START) });
      const me = await f.start("me");
      for (let i = 0; i < 30; i++) {
        await f.advance(2_000);
        f.api.write({ holderIdentity: "other", leaseDurationSeconds: 15, renewTime: microTime(f.clock.now()) });
        expect(me.elector.isLeader).to.equal(false);
      }
      expect(me.changes).to.deep.equal([]);
    });

    it("never takes a renewed lease when its wall clock is set forward between two reads", async () => {
      // The holder renews every 10 s of a 15 s lease; we read every 2-4.4 s, so most reads see no change.
      f.api.write({ holderIdentity: "other", leaseDurationSeconds: 15, renewTime: microTime(START) });
      const me = await f.start("me");
      for (let i = 0; i < 6; i++) {
        await f.advance(5_000);
        f.clock.stepWallClock(20_000);
        await f.advance(5_000);
        f.api.write({ holderIdentity: "other", leaseDurationSeconds: 15, renewTime: microTime(f.clock.now()) });
        expect(me.elector.isLeader).to.equal(false);
      }
      expect(me.changes).to.deep.equal([]);
    });

    it("takes a released lease (empty holder) at once", async () => {
      f.api.write({ holderIdentity: "", leaseDurationSeconds: 1, leaseTransitions: 2, renewTime: microTime(START) });
      const me = await f.start("me");
      expect(me.elector.isLeader).to.equal(true);
      expect(f.api.spec).to.include({ holderIdentity: "me", leaseTransitions: 3, leaseDurationSeconds: 15 });
    });

    it("retries a failing API server no sooner than one retry period", async () => {
      f.api.mode = "down";
      await f.start("me");
      expect(f.api.calls).to.have.length(1);
      await f.advance(1_999, 1);
      expect(f.api.calls).to.have.length(1);
      await f.advance(2_401, 1);
      expect(f.api.calls).to.have.length.of.at.least(2);
    });

    it("resolves waitForLeadership true on leading and false when aborted first", async () => {
      f.api.write({ holderIdentity: "other", leaseDurationSeconds: 15, renewTime: microTime(START) });
      const elector = f.elector("me");
      const gaveUp = new AbortController();
      const early = elector.waitForLeadership(gaveUp.signal);
      gaveUp.abort();
      expect(await early).to.equal(false);

      const waiting = elector.waitForLeadership(new AbortController().signal);
      const stop = new AbortController();
      const done = elector.run(stop.signal);
      await f.advance(20_000);
      expect(await waiting).to.equal(true);
      expect(await elector.waitForLeadership(new AbortController().signal)).to.equal(true);
      stop.abort();
      await done;
    });

    it("refuses a second concurrent run()", async () => {
      const me = await f.start("me");
      let error: unknown;
      await me.elector.run(new AbortController().signal).catch((e: unknown) => {
        error = e;
      });
      expect(error).to.be.instanceOf(Error);
    });
  });

  describe("leading", () => {
    it("renews every retry period with one PUT, and logs no line per renewal", async () => {
      const me = await f.start("me");
      const linesAtStart = (await f.logs()).length;
      const getsAtStart = f.api.count("GET");
      await f.advance(20_000);
      expect(f.api.count("PUT")).to.equal(10);
      expect(f.api.count("GET")).to.equal(getsAtStart);
      expect(f.api.spec.renewTime).to.equal(microTime(START + 20_000));
      expect(f.api.spec.acquireTime).to.equal(microTime(START));
      expect((await f.logs()).length).to.equal(linesAtStart);
      expect(me.changes).to.deep.equal([true]);
    });

    it("steps down when renewals fail for the renew deadline, before the lease could expire", async () => {
      const me = await f.start("me");
      await f.advance(2_000); // renewed at START + 2 s
      f.api.mode = "down";
      await f.advance(9_999, 1);
      expect(me.elector.isLeader).to.equal(true);
      await f.clock.advanceAsync(1);
      expect(me.elector.isLeader).to.equal(false);
      expect(me.changes).to.deep.equal([true, false]);
      // Others see the lease valid until at least START + 2 s + 15 s; we stopped at START + 12 s.
      expect(f.api.spec.renewTime).to.equal(microTime(START + 2_000));
      await f.advance(60_000);
      expect(me.changes).to.deep.equal([true, false]);
      const lost = (await f.logs()).find((line) => line.msg === "lost the lease");
      expect(lost?.level).to.equal("warn");
    });

    it("steps down at the deadline even while a renewal hangs", async () => {
      const me = await f.start("me");
      f.api.mode = "hang";
      await f.advance(9_999, 1);
      expect(me.elector.isLeader).to.equal(true);
      await f.clock.advanceAsync(1);
      expect(me.elector.isLeader).to.equal(false);
      expect(me.changes).to.deep.equal([true, false]);
    });

    it("is no leader once its last renewal is a renew deadline old, though the step-down timer has not run (a frozen process resumed)", async () => {
      // Monotonic time moves on while no timer runs: what a process stopped by SIGSTOP finds when it resumes.
      let frozenMs = 0;
      const clock: Clock = {
        now: () => f.clock.now() + frozenMs,
        monotonic: () => f.clock.monotonic() + frozenMs,
        setTimeout: (callback, delayMs) => f.clock.setTimeout(callback, delayMs),
        clearTimeout: (handle) => f.clock.clearTimeout(handle),
      };
      const me = await f.start("me", { clock });
      frozenMs = 9_999;
      expect(me.elector.isLeader).to.equal(true);
      frozenMs = 10_000;
      expect(me.elector.isLeader).to.equal(false);
      expect(me.changes, "the step-down timer has not run").to.deep.equal([true]);
      let waited: boolean | undefined;
      void me.elector.waitForLeadership(new AbortController().signal).then((leading) => {
        waited = leading;
      });
      await Promise.resolve();
      expect(waited, "a worker waits for the next term").to.equal(undefined);
    });

    it("steps down at once when it finds another holder in the lease", async () => {
      const me = await f.start("me");
      f.api.write({ holderIdentity: "usurper", leaseDurationSeconds: 15, renewTime: microTime(START) });
      await f.clock.advanceAsync(2_000);
      expect(me.elector.isLeader).to.equal(false);
      expect(me.changes).to.deep.equal([true, false]);
      const lines = await f.logs();
      expect(lines.find((line) => line.msg === "lost the lease")?.reason).to.match(/usurper/);
      expect(lines.find((line) => line.msg === "the lease is held by another")?.holder).to.equal("usurper");
    });

    it("keeps leading, every renewal answered, when its wall clock is set forward (NTP step, VM resumed)", async () => {
      f.api.latencyMs = 5;
      const me = await f.start("me");
      await f.advance(3_000);
      const putsBefore = f.api.count("PUT");
      f.clock.stepWallClock(60_000);
      await f.advance(20_000);
      expect(me.elector.isLeader).to.equal(true);
      expect(me.changes).to.deep.equal([true]);
      expect(f.api.count("PUT") - putsBefore).to.equal(10);
      // The Lease carries the wall clock as it now reads: renewed within the last retry period.
      const renewedAt = Date.parse(f.api.spec.renewTime ?? "");
      expect(f.clock.now() - renewedAt).to.be.within(0, 2_100);
      const warnings = (await f.logs()).filter((line) => line.level === "warn");
      expect(warnings).to.deep.equal([]);
    });

    it("keeps leading when its wall clock is set back", async () => {
      f.api.latencyMs = 5;
      const me = await f.start("me");
      await f.advance(3_000);
      f.clock.stepWallClock(-60_000);
      f.api.mode = "hang";
      // Renewals that get no answer still end it at the renew deadline of time that really passed.
      await f.advance(9_000, 1);
      expect(me.elector.isLeader).to.equal(true);
      await f.advance(1_000, 1);
      expect(me.elector.isLeader).to.equal(false);
    });

    it("counts a new term when it leads again after losing the lease", async () => {
      const me = await f.start("me");
      f.api.write({ holderIdentity: "usurper", leaseDurationSeconds: 15, renewTime: microTime(START) });
      await f.clock.advanceAsync(2_000);
      expect(me.elector.isLeader).to.equal(false);
      expect(me.elector.term, "losing it starts no term").to.equal(1);
      f.api.write({ holderIdentity: "", leaseDurationSeconds: 1, renewTime: microTime(START + 2_000) });
      await f.advance(30_000);
      expect(me.elector.isLeader).to.equal(true);
      expect(me.elector.term).to.equal(2);
    });

    it("keeps leading when the leadership callback throws, and logs it", async () => {
      const me = await f.start("me", {
        onLeadershipChange: () => {
          throw new Error("boom");
        },
      });
      expect(me.elector.isLeader).to.equal(true);
      expect((await f.logs()).some((line) => line.level === "error" && line.error === "boom")).to.equal(true);
    });
  });

  describe("releasing", () => {
    it("on abort, steps down first, then empties the holder with a 1 s duration", async () => {
      const holderWhenSteppingDown: (string | undefined)[] = [];
      const me = await f.start("me", {
        onLeadershipChange: (leading) => {
          if (!leading) holderWhenSteppingDown.push(f.api.spec.holderIdentity);
        },
      });
      await f.advance(4_000);
      await f.stop(me);
      expect(me.elector.isLeader).to.equal(false);
      expect(holderWhenSteppingDown).to.deep.equal(["me"]);
      expect(f.api.spec).to.include({ holderIdentity: "", leaseDurationSeconds: 1, leaseTransitions: 0 });
    });

    it("re-reads and still releases when its last renewal landed unseen (409)", async () => {
      const me = await f.start("me");
      f.api.write({ ...f.api.spec, renewTime: microTime(f.clock.now()) }); // a newer resourceVersion, still ours
      await f.stop(me);
      expect(f.api.spec).to.include({ holderIdentity: "", leaseDurationSeconds: 1 });
      expect(f.api.calls.slice(-3)).to.deep.equal(["PUT", "GET", "PUT"]);
    });

    it("leaves alone a lease it does not hold", async () => {
      f.api.write({ holderIdentity: "other", leaseDurationSeconds: 15, renewTime: microTime(START) });
      const me = await f.start("me");
      await f.stop(me);
      expect(f.api.count("PUT")).to.equal(0);
      expect(f.api.spec.holderIdentity).to.equal("other");
    });
  });
});
