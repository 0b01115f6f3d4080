// The transport's undici Agent, loaded from its own module, is the package's own.
import { expect } from "chai";
import * as undici from "undici";
import { undiciAgent } from "../../../src/kube/undici-connections.js";

describe("kube/undici-connections", () => {
  it("loads the Agent class the package exports", () => {
    expect(undiciAgent()).to.equal(undici.Agent);
  });
});
