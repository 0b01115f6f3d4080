// The transport's undici Agent, loaded from its own module, is the package's own.
import { expect } from "chai";
import * as undici from "undici";
import { Agent } from "../../../src/kube/undici-parts.js";

describe("undici parts", () => {
  it("Agent is the class the package exports", () => {
    expect(Agent).to.equal(undici.Agent);
  });
});
