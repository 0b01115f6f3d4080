// Two LeaderElectors on one in-memory Lease: never both leading, fast handover on release, slow on a crash.
import { expect } from "chai";
import { ElectionFixture, type Running } from "./election-fixture.js";

describe("LeaderElector, two on one lease", () => {
  let f: ElectionFixture;
  let both: number;

  const never = (a: Running, b: Running) => () => {
    if (a.elector.isLeader && b.elector.isLeader) both++;
  };

  beforeEach(() => {
    f = new ElectionFixture();
    both = 0;
  });

  afterEach(async () => {
    await f.close();
  });

  it("elects exactly one, and hands over within a retry period when the leader releases", async () => {
    const a = await f.start("a", { transport: f.api.connect() });
    const b = await f.start("b", { transport: f.api.connect() });
    await f.advance(60_000, 50, never(a, b));
    expect(a.elector.isLeader).to.equal(true);
    expect(b.elector.isLeader).to.equal(false);
    expect(b.changes).to.deep.equal([]);

    await f.stop(a);
    const released = f.clock.now();
    await f.advance(4_500, 50, never(a, b)); // 2.2 × the retry period at most
    expect(b.elector.isLeader).to.equal(true);
    expect(f.clock.now() - released).to.be.below(15_000);
    expect(f.api.spec).to.include({ holderIdentity: "b", leaseTransitions: 1 });
    expect(both).to.equal(0);
  });

  it("takes over from a leader cut off from the API only after the lease duration, and it never leads again", async () => {
    const aNet = f.api.connect();
    const a = await f.start("a", { transport: aNet });
    const b = await f.start("b", { transport: f.api.connect() });
    await f.advance(3_000, 50, never(a, b));
    const lastRenewal = f.clock.now() - 1_000; // a renews at 2 s, 4 s, …
    aNet.mode = "down";

    let aStepped = 0;
    let bLed = 0;
    await f.advance(30_000, 50, () => {
      never(a, b)();
      if (!aStepped && !a.elector.isLeader) aStepped = f.clock.now();
      if (!bLed && b.elector.isLeader) bLed = f.clock.now();
    });
    expect(aStepped - lastRenewal).to.be.at.most(10_000);
    expect(bLed - lastRenewal).to.be.at.least(15_000);
    expect(a.changes).to.deep.equal([true, false]);
    expect(b.changes).to.deep.equal([true]);
    expect(both).to.equal(0);

    aNet.mode = "ok";
    await f.advance(10_000, 50, never(a, b));
    expect(a.elector.isLeader).to.equal(false);
    expect(b.elector.isLeader).to.equal(true);
  });
});
