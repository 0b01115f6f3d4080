// unsupportedNode: Node 24.11 and later run cni-repair; an older one is refused, naming its version.
import { expect } from "chai";
import { unsupportedNode } from "../../../src/cli/node-support.js";

describe("unsupportedNode", () => {
  it("refuses a Node before 24.11, naming its version", () => {
    expect(unsupportedNode("20.20.2")).to.equal("needs Node.js 24.11 or later; this is Node.js v20.20.2");
    expect(unsupportedNode("24.10.0")).to.equal("needs Node.js 24.11 or later; this is Node.js v24.10.0");
  });

  it("runs on 24.11 and later, this process's Node included", () => {
    for (const version of ["24.11.0", "24.22.3", "25.2.1"]) expect(unsupportedNode(version)).to.equal(undefined);
    expect(unsupportedNode()).to.equal(undefined);
  });
});
