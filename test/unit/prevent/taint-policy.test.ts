// decideTaint: every row of the policy table, the share cap's rounding, and bootstrap-only never adding.
import { expect } from "chai";
import fc from "fast-check";
import {
  type AgentState,
  decideTaint,
  type NodeTaintInput,
  type TaintPolicy,
  taintCap,
} from "../../../src/prevent/taint-policy.js";

const ISTIO = "cni.istio.io/not-ready";
const policy = (overrides: Partial<TaintPolicy> = {}): TaintPolicy => ({
  mode: "bootstrap-only",
  keys: [ISTIO],
  minReadyMs: 10_000,
  notReadyAfterMs: 60_000,
  maxShare: 0.2,
  ...overrides,
});
const input = (agents: AgentState, overrides: Partial<NodeTaintInput> = {}): NodeTaintInput => ({
  present: [],
  agents,
  nodes: 10,
  tainted: 0,
  ...overrides,
});
const ready = (forMs: number): AgentState => ({ kind: "ready", forMs });
const notReady = (forMs: number): AgentState => ({ kind: "not_ready", forMs });
const absent: AgentState = { kind: "absent" };

describe("decideTaint", () => {
  describe("a tainted node", () => {
    const tainted = { present: [ISTIO] };
    it("keeps the taint while no agent pod is on the node", () => {
      expect(decideTaint(input(absent, tainted), policy())).to.include({ kind: "hold", reason: "no_agent_pod" });
    });
    it("keeps it while the agent is not Ready, in either mode", () => {
      for (const mode of ["bootstrap-only", "continuous"] as const) {
        expect(decideTaint(input(notReady(5_000), tainted), policy({ mode }))).to.include({
          kind: "hold",
          reason: "agent_not_ready",
        });
      }
    });
    it("keeps it until the agent has been Ready for --cni-agent-min-ready, and says when to look again", () => {
      expect(decideTaint(input(ready(4_000), tainted), policy())).to.deep.include({
        kind: "hold",
        reason: "agent_min_ready",
        retryAfterMs: 6_000,
      });
    });
    it("removes every configured key it carries once the agent has been Ready long enough", () => {
      const decision = decideTaint(input(ready(10_000), { present: [ISTIO, "x/y"] }), policy({ keys: [ISTIO, "x/y"] }));
      expect(decision).to.deep.include({ kind: "remove", keys: [ISTIO, "x/y"] });
    });
    it("removes at once with --cni-agent-min-ready=0", () => {
      expect(decideTaint(input(ready(0), tainted), policy({ minReadyMs: 0 })).kind).to.equal("remove");
    });
  });

  describe("an untainted node", () => {
    it("bootstrap-only never adds a taint, however long the agent is down", () => {
      fc.assert(
        fc.property(fc.nat(10_000_000), fc.nat(1000), (forMs, tainted) => {
          const decision = decideTaint(input(notReady(forMs), { nodes: 1000, tainted }), policy());
          expect(decision.kind).to.equal("none");
        }),
      );
    });
    it("continuous: nothing while the agent is Ready or absent", () => {
      for (const agents of [ready(0), ready(1e9), absent]) {
        expect(decideTaint(input(agents), policy({ mode: "continuous" }))).to.deep.equal({ kind: "none" });
      }
    });
    it("continuous: waits out --startup-taint-not-ready-after, then adds the first key", () => {
      const continuous = policy({ mode: "continuous", keys: [ISTIO, "x/y"] });
      expect(decideTaint(input(notReady(45_000)), continuous)).to.deep.equal({ kind: "none", retryAfterMs: 15_000 });
      expect(decideTaint(input(notReady(60_000)), continuous)).to.deep.include({ kind: "add", key: ISTIO });
    });
    it("continuous: the share cap counts every tainted node and holds the one over it", () => {
      const continuous = policy({ mode: "continuous", maxShare: 0.2 });
      expect(decideTaint(input(notReady(60_000), { nodes: 10, tainted: 1 }), continuous).kind).to.equal("add");
      expect(decideTaint(input(notReady(60_000), { nodes: 10, tainted: 2 }), continuous)).to.include({
        kind: "hold",
        reason: "share_cap",
      });
    });
    it("continuous: never more than the share of nodes, whatever the numbers", () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 5000 }),
          fc.double({ min: 0.001, max: 1, noNaN: true }),
          (nodes, share) => {
            // Add one node at a time, as the single worker does, counting each add.
            let tainted = 0;
            for (let node = 0; node < nodes; node++) {
              const decision = decideTaint(
                input(notReady(1e9), { nodes, tainted }),
                policy({ mode: "continuous", maxShare: share }),
              );
              if (decision.kind === "add") tainted++;
            }
            expect(tainted).to.equal(taintCap(nodes, share));
            expect(tainted).to.be.at.most(nodes * share + 1e-6);
          },
        ),
      );
    });
  });

  it("taintCap rounds down: a share below one node's worth taints none; a share of 1 all", () => {
    expect(taintCap(3, 0.2)).to.equal(0);
    expect(taintCap(10, 0.2)).to.equal(2);
    expect(taintCap(10, 0.3)).to.equal(3);
    expect(taintCap(7, 1)).to.equal(7);
  });
});
