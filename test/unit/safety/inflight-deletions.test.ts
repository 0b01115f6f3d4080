// InflightDeletions: per-node and per-namespace caps on pods we deleted that are still terminating.

import { expect } from "chai";
import fc from "fast-check";
import type { PodFacts } from "../../../src/detect/facts.js";
import { InflightDeletions } from "../../../src/safety/inflight-deletions.js";
import { podFacts, uniquePod } from "../../support/pod-builders.js";

const pod = (nodeName: string | undefined, namespace = "shop"): PodFacts => uniquePod({ nodeName, namespace }, "p");

describe("safety/inflight-deletions", () => {
  it("holds at the node cap until a slot is released", () => {
    const inflight = new InflightDeletions({ perNode: 2, perNamespace: 0 });
    const [a, b, c] = [pod("node-a"), pod("node-a"), pod("node-a")] as [PodFacts, PodFacts, PodFacts];
    expect(inflight.blockedBy(a)).to.equal(undefined);
    inflight.reserve(a);
    expect(inflight.blockedBy(b)).to.equal(undefined);
    inflight.reserve(b);
    expect(inflight.blockedBy(c)).to.equal("node_inflight");
    expect(inflight.blockedBy(pod("node-b"))).to.equal(undefined);
    expect(inflight.release(a.uid)).to.deep.equal({ node: "node-a", namespace: "shop" });
    expect(inflight.blockedBy(c)).to.equal(undefined);
    expect(inflight.size).to.equal(1);
  });

  it("holds at the namespace cap across nodes", () => {
    const inflight = new InflightDeletions({ perNode: 0, perNamespace: 2 });
    inflight.reserve(pod("node-a", "shop"));
    inflight.reserve(pod("node-b", "shop"));
    expect(inflight.blockedBy(pod("node-c", "shop"))).to.equal("namespace_inflight");
    expect(inflight.blockedBy(pod("node-c", "billing"))).to.equal(undefined);
  });

  it("names the node cap first when both are reached", () => {
    const inflight = new InflightDeletions({ perNode: 1, perNamespace: 1 });
    inflight.reserve(pod("node-a"));
    expect(inflight.blockedBy(pod("node-a"))).to.equal("node_inflight");
    expect(inflight.blockedBy(pod("node-b"))).to.equal("namespace_inflight");
  });

  it("has no limit where a cap is 0", () => {
    const inflight = new InflightDeletions({ perNode: 0, perNamespace: 0 });
    for (let i = 0; i < 500; i++) inflight.reserve(pod("node-a"));
    expect(inflight.size).to.equal(500);
    expect(inflight.blockedBy(pod("node-a"))).to.equal(undefined);
  });

  it("counts a pod UID once however often it is reserved", () => {
    const inflight = new InflightDeletions({ perNode: 2, perNamespace: 0 });
    const a = pod("node-a");
    inflight.reserve(a);
    inflight.reserve(a);
    inflight.reserve({ ...a, nodeName: "node-b" });
    expect(inflight.size).to.equal(1);
    expect(inflight.blockedBy(pod("node-a"))).to.equal(undefined);
    expect(inflight.release(a.uid)).to.deep.equal({ node: "node-a", namespace: "shop" });
  });

  it("releases a slot once; unknown UIDs free nothing", () => {
    const inflight = new InflightDeletions({ perNode: 1, perNamespace: 0 });
    const a = pod("node-a");
    inflight.reserve(a);
    expect(inflight.release("somebody-else")).to.equal(undefined);
    expect(inflight.blockedBy(pod("node-a"))).to.equal("node_inflight");
    expect(inflight.release(a.uid)).to.not.equal(undefined);
    expect(inflight.release(a.uid)).to.equal(undefined);
    expect(inflight.size).to.equal(0);
    expect(inflight.blockedBy(pod("node-a"))).to.equal(undefined);
  });

  it("counts pods without a node together, under the empty node name", () => {
    const inflight = new InflightDeletions({ perNode: 1, perNamespace: 0 });
    const unscheduled = pod(undefined);
    inflight.reserve(unscheduled);
    expect(inflight.blockedBy(pod(undefined))).to.equal("node_inflight");
    expect(inflight.blockedBy(pod("node-a"))).to.equal(undefined);
    expect(inflight.release(unscheduled.uid)).to.deep.equal({ node: "", namespace: "shop" });
  });

  it("property: blocks exactly when a cap is reached by the UIDs reserved and not released", () => {
    const nodes = ["n1", "n2", "n3"];
    const namespaces = ["ns1", "ns2"];
    const opArb = fc.oneof(
      fc.record({
        kind: fc.constant("reserve" as const),
        uid: fc.nat(9),
        node: fc.constantFrom(...nodes),
        namespace: fc.constantFrom(...namespaces),
      }),
      fc.record({ kind: fc.constant("release" as const), uid: fc.nat(9) }),
    );
    const capsArb = fc.record({ perNode: fc.nat(3), perNamespace: fc.nat(4) });
    fc.assert(
      fc.property(capsArb, fc.array(opArb, { maxLength: 50 }), (caps, ops) => {
        const inflight = new InflightDeletions(caps);
        const model = new Map<string, { node: string; namespace: string }>();
        for (const op of ops) {
          const uid = `u${op.uid}`;
          if (op.kind === "reserve") {
            inflight.reserve(podFacts({ uid, nodeName: op.node, namespace: op.namespace }));
            if (!model.has(uid)) model.set(uid, { node: op.node, namespace: op.namespace });
          } else {
            expect(inflight.release(uid)).to.deep.equal(model.get(uid));
            model.delete(uid);
          }
          expect(inflight.size).to.equal(model.size);
          for (const node of nodes) {
            for (const namespace of namespaces) {
              const onNode = [...model.values()].filter((s) => s.node === node).length;
              const inNs = [...model.values()].filter((s) => s.namespace === namespace).length;
              const expected =
                caps.perNode > 0 && onNode >= caps.perNode
                  ? "node_inflight"
                  : caps.perNamespace > 0 && inNs >= caps.perNamespace
                    ? "namespace_inflight"
                    : undefined;
              expect(inflight.blockedBy(podFacts({ uid: "probe", nodeName: node, namespace }))).to.equal(expected);
            }
          }
        }
      }),
    );
  });
});
