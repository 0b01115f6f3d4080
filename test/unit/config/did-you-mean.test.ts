// "did you mean": the closest known word, offered only when close enough to be a typo.
import { expect } from "chai";
import { closestName, didYouMean, suggestion } from "../../../src/config/did-you-mean.js";

describe("config/did-you-mean", () => {
  it("closestName picks the smallest edit distance", () => {
    expect(closestName("CNI_REPAIR_MOD", ["CNI_REPAIR_NODE_NAME", "CNI_REPAIR_MODE"])).to.equal("CNI_REPAIR_MODE");
  });

  it("suggests within two edits, or a third of a long word; nothing further away", () => {
    const commands = ["run", "scan", "explain", "version", "help"];
    expect(suggestion("scna", commands)).to.equal("scan");
    expect(suggestion("rnu", commands)).to.equal("run");
    expect(suggestion("versoin", commands)).to.equal("version");
    expect(suggestion("deploy", commands)).to.equal(undefined);
    expect(suggestion("x", [])).to.equal(undefined);
    // 23 letters: up to 7 edits.
    expect(suggestion("max-deletion-per-min", ["max-deletions-per-minute", "deletion-burst"])).to.equal(
      "max-deletions-per-minute",
    );
  });

  it("words the hint to append to a message", () => {
    expect(didYouMean("namespace", ["namespaces"], (name) => `--${name}`)).to.equal(" (did you mean --namespaces?)");
    expect(didYouMean("zzz", ["namespaces"])).to.equal("");
  });
});
