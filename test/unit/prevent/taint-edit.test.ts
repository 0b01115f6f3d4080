// applyEdit and taintPatch: only the configured keys change; the patch tests the list as it was read.
import { expect } from "chai";
import { type NodeFacts, startupKeysOn, toNodeFacts } from "../../../src/informer/node-facts.js";
import { applyEdit } from "../../../src/prevent/taint-edit.js";
import { taintPatch } from "../../../src/prevent/taint-patcher.js";

const ISTIO = { key: "cni.istio.io/not-ready", effect: "NoSchedule" };
const OTHER = { key: "dedicated", value: "gpu", effect: "NoSchedule" };
const EXEC = { key: "node.kubernetes.io/unreachable", effect: "NoExecute", timeAdded: "2026-01-01T00:00:00Z" };

describe("applyEdit", () => {
  it("remove drops only the configured keys, every other taint kept in place with its fields", () => {
    expect(applyEdit([OTHER, ISTIO, EXEC], { kind: "remove", keys: [ISTIO.key] })).to.deep.equal([OTHER, EXEC]);
  });
  it("remove drops every taint with the key, whatever its effect", () => {
    const both = [ISTIO, { key: ISTIO.key, effect: "NoExecute" }];
    expect(applyEdit(both, { kind: "remove", keys: [ISTIO.key] })).to.deep.equal([]);
  });
  it("remove of a key that is not there changes nothing", () => {
    expect(applyEdit([OTHER], { kind: "remove", keys: [ISTIO.key] })).to.equal(undefined);
    expect(applyEdit(undefined, { kind: "remove", keys: [ISTIO.key] })).to.equal(undefined);
  });
  it("add appends the key with NoSchedule, never NoExecute", () => {
    expect(applyEdit([OTHER], { kind: "add", key: ISTIO.key })).to.deep.equal([OTHER, ISTIO]);
    expect(applyEdit(undefined, { kind: "add", key: ISTIO.key })).to.deep.equal([ISTIO]);
  });
  it("add of a key already there (any effect) changes nothing", () => {
    expect(applyEdit([{ key: ISTIO.key, effect: "NoExecute" }], { kind: "add", key: ISTIO.key })).to.equal(undefined);
  });
});

describe("taintPatch", () => {
  it("tests the version judged and the list as read, then sets the new one", () => {
    expect(taintPatch({ resourceVersion: "42", taints: [OTHER, ISTIO] }, [OTHER])).to.deep.equal([
      { op: "test", path: "/metadata/resourceVersion", value: "42" },
      { op: "test", path: "/spec/taints", value: [OTHER, ISTIO] },
      { op: "add", path: "/spec/taints", value: [OTHER] },
    ]);
  });
  it("tests for no list (null) when the node had none", () => {
    expect(taintPatch({ resourceVersion: "42", taints: undefined }, [ISTIO])[1]).to.deep.equal({
      op: "test",
      path: "/spec/taints",
      value: null,
    });
  });
  it("removes the field when no taint is left", () => {
    expect(taintPatch({ resourceVersion: "42", taints: [ISTIO] }, [])[2]).to.deep.equal({
      op: "remove",
      path: "/spec/taints",
    });
  });
});

describe("toNodeFacts", () => {
  it("keeps name, uid, creation and the taints' own fields only", () => {
    const facts = toNodeFacts({
      metadata: {
        name: "n1",
        uid: "u1",
        resourceVersion: "7",
        creationTimestamp: "2026-12-03T20:00:00Z",
        labels: { a: "b" },
      },
      spec: { taints: [OTHER, { key: 5 }, EXEC], podCIDR: "10.0.0.0/24" },
      status: { capacity: {} },
    });
    expect(facts).to.deep.equal({
      name: "n1",
      uid: "u1",
      resourceVersion: "7",
      createdAtMs: Date.parse("2026-12-03T20:00:00Z"),
      taints: [OTHER, EXEC],
    } satisfies NodeFacts);
  });
  it("is undefined for anything without a name, and never throws", () => {
    for (const raw of [null, undefined, 5, "x", {}, { metadata: { name: "" } }, { metadata: null }]) {
      expect(toNodeFacts(raw)).to.equal(undefined);
    }
  });
  it("startupKeysOn lists the configured keys present, in configured order", () => {
    expect(startupKeysOn([OTHER, ISTIO], ["x/y", ISTIO.key, "dedicated"])).to.deep.equal([ISTIO.key, "dedicated"]);
    expect(startupKeysOn(undefined, [ISTIO.key])).to.deep.equal([]);
  });
});
