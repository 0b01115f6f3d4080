// Election timings: client-go's validity rules and jitter; MicroTime formatting; identities.
import { expect } from "chai";
import { electionIdentity } from "../../../src/election/identity.js";
import { microTime } from "../../../src/election/lease-record.js";
import { DEFAULT_ELECTION_TIMINGS, jittered, validateElectionTimings } from "../../../src/election/timings.js";
import { ElectionFixture } from "./election-fixture.js";

describe("election timings", () => {
  it("accepts client-go's defaults", () => {
    expect(() => validateElectionTimings(DEFAULT_ELECTION_TIMINGS)).not.to.throw();
  });

  const cases: [string, { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number }, RegExp][] = [
    [
      "renew deadline = lease duration",
      { leaseDurationMs: 10_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
      /renew deadline .* shorter than the lease duration/,
    ],
    [
      "retry period too close to the deadline",
      { leaseDurationMs: 15_000, renewDeadlineMs: 2_000, retryPeriodMs: 2_000 },
      /longer than 1.2 × the retry period/,
    ],
    ["sub-second lease", { leaseDurationMs: 900, renewDeadlineMs: 500, retryPeriodMs: 100 }, /at least 1s/],
    [
      "zero retry period",
      { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 0 },
      /retryPeriodMs must be > 0/,
    ],
    [
      "NaN",
      { leaseDurationMs: Number.NaN, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
      /leaseDurationMs must be > 0/,
    ],
  ];
  for (const [name, timings, message] of cases) {
    it(`rejects ${name} with a RangeError`, () => {
      expect(() => validateElectionTimings(timings)).to.throw(RangeError, message);
    });
  }

  it("is checked by the LeaderElector constructor, identity included", async () => {
    const f = new ElectionFixture();
    expect(() => f.elector("me", { renewDeadlineMs: 20_000 })).to.throw(RangeError);
    expect(() => f.elector("")).to.throw(RangeError, /identity/);
    await f.close();
  });

  it("jitters like client-go: from the duration up to 2.2 times it", () => {
    expect(jittered(2_000, 1.2, () => 0)).to.equal(2_000);
    expect(jittered(2_000, 1.2, () => 1)).to.equal(4_400);
    expect(jittered(2_000, 1.2, () => Number.NaN)).to.equal(2_000);
    for (let i = 0; i < 100; i++) expect(jittered(2_000)).to.be.within(2_000, 4_400);
  });
});

describe("microTime", () => {
  it("writes six fractional digits, as the API server's MicroTime parser wants", () => {
    expect(microTime(Date.UTC(2026, 4, 3, 12, 0, 1, 234))).to.equal("2026-05-03T12:00:01.234000Z");
  });
});

describe("electionIdentity", () => {
  it("is the hostname plus a unique suffix", () => {
    const a = electionIdentity("pod-1");
    expect(a).to.match(/^pod-1_[0-9a-f-]{36}$/);
    expect(electionIdentity("pod-1")).not.to.equal(a);
  });
});
