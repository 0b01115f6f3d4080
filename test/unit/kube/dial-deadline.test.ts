// A dial's deadline: how long requests can wait on one connection attempt that never finishes its handshake.
import { expect } from "chai";
import { dialDeadlineMs } from "../../../src/kube/transport.js";

describe("a dial's deadline", () => {
  it("is two PING intervals while that is short (a test's 1 s checks give a dial 2 s)", () => {
    expect(dialDeadlineMs(1_000)).to.equal(2_000);
    expect(dialDeadlineMs(15_000)).to.equal(30_000);
  });

  it("is 30 s at most: the default 90 s stall timeout (PINGs every 45 s) no longer leaves a dial 90 s", () => {
    expect(dialDeadlineMs(45_000)).to.equal(30_000);
    expect(dialDeadlineMs(3_600_000)).to.equal(30_000);
  });
});
