// AgentReadiness: the questions only it answers (the outage threshold at its edge, Istio's fallback Ready time, a
// node's CNI agents for its startup taint); the gate and the enrolment grace are tested through the guards.
import { expect } from "chai";
import type { PodFacts } from "../../../src/detect/facts.js";
import { type AgentFacts, CniAgents } from "../../../src/informer/cni-agent-pods.js";
import type { NodeAgentGate } from "../../../src/informer/node-agent-watcher.js";
import { AgentReadiness } from "../../../src/safety/agent-readiness.js";
import { cniAgentGate } from "../../support/agent-readiness.js";
import { uniquePod } from "../../support/pod-builders.js";
import { FakeClock } from "../fake-clock.js";

const SECOND = 1_000;
const START = Date.parse("2025-03-04T10:20:00Z");
const MIN_READY = 10 * SECOND;

/** An agent pod on the node, Ready since the kubelet's time given (undefined: not Ready), seen Ready long ago. */
const agent = (name: string, nodeName: string, readySinceMs: number | undefined): AgentFacts => ({
  namespace: "istio-system",
  name,
  nodeName,
  readySinceMs,
  seenReadyAtMs: readySinceMs === undefined ? undefined : START - 3_600 * SECOND,
});

const agentsOf = (...facts: AgentFacts[]) => {
  const agents = new CniAgents();
  for (const each of facts) agents.store.upsert(each);
  return agents;
};

const ztunnelGate = (agents: CniAgents): NodeAgentGate => ({
  agents,
  reason: "ztunnel_not_ready",
  what: "ztunnel",
  selectorFlag: "--ztunnel-selector",
  minReadyMs: MIN_READY,
});

function readinessOf(gatesByRule: ReadonlyMap<string, readonly NodeAgentGate[]>) {
  const clock = new FakeClock(START);
  return { clock, readiness: new AgentReadiness({ gatesByRule, clock }) };
}

const pod = (nodeName: string, sandboxSinceMs: number): PodFacts => uniquePod({ nodeName, sandboxSinceMs });

describe("safety/AgentReadiness", () => {
  it("an outage explains breakage until the agent has been Ready min-ready + 60 s by the kubelet's time, and pods sandboxed before then", () => {
    const readyAt = START - 30 * SECOND;
    const { clock, readiness } = readinessOf(
      new Map([["istio", [cniAgentGate(agentsOf(agent("cni", "node-a", readyAt)), MIN_READY)]]]),
    );
    const edge = readyAt + MIN_READY + 60 * SECOND;
    // Before it, the outage's; from it on, not.
    expect(readiness.sandboxedDuringOutage(pod("node-a", edge - 1), "istio")).to.equal(true);
    expect(readiness.sandboxedDuringOutage(pod("node-a", edge), "istio")).to.equal(false);
    // Asked again after the edge has passed, the same pods get the same answers: the pod's time decides, not when.
    clock.advance(edge - START + 10 * 60 * SECOND);
    expect(readiness.sandboxedDuringOutage(pod("node-a", edge - 1), "istio")).to.equal(true);
    expect(readiness.sandboxedDuringOutage(pod("node-a", edge), "istio")).to.equal(false);
    // No Ready agent on the node: every pod there is the outage's, however new.
    expect(readiness.sandboxedDuringOutage(pod("node-b", clock.now()), "istio")).to.equal(true);
    // Unknown times are never the outage's (the cluster-wide pace), nor is anything without a gate.
    const timeless = uniquePod({ nodeName: "node-b", sandboxSinceMs: undefined, createdAtMs: undefined });
    expect(readiness.sandboxedDuringOutage(timeless, "istio")).to.equal(false);
    expect(readiness.sandboxedDuringOutage(pod("node-b", clock.now()), "linkerd")).to.equal(false);
  });

  it("an outage of ztunnel alone explains nothing: only the CNI agent breaks pods' networking at setup", () => {
    const { readiness } = readinessOf(new Map([["istio-ambient", [ztunnelGate(new CniAgents())]]]));
    expect(readiness.sandboxedDuringOutage(pod("node-a", START), "istio-ambient")).to.equal(false);
  });

  it("gives Istio's fallback the CNI agent's Ready time by the kubelet's clock, and its min-ready", () => {
    const readyAt = START - 5 * SECOND;
    const { readiness } = readinessOf(
      new Map([["istio", [cniAgentGate(agentsOf(agent("cni", "node-a", readyAt)), MIN_READY)]]]),
    );
    // This controller saw it Ready an hour ago; the kubelet's time is what the validator's finish time compares with.
    expect(readiness.cniAgentReadySince("node-a", "istio")).to.deep.equal({ atMs: readyAt, minReadyMs: MIN_READY });
    expect(readiness.cniAgentReadySince("node-b", "istio")).to.deep.equal({ atMs: undefined, minReadyMs: MIN_READY });
    expect(readiness.cniAgentReadySince("node-a", "linkerd")).to.deep.equal({ atMs: undefined, minReadyMs: 0 });
  });

  it("sums up a node's CNI agent sets for its startup taint: one NotReady wins, then one missing, else the shortest Ready", () => {
    const istio = agentsOf(
      agent("istio-a", "node-a", START - 40 * SECOND),
      agent("istio-b", "node-b", undefined),
      agent("istio-c", "node-c", START - 40 * SECOND),
    );
    const linkerd = agentsOf(agent("linkerd-a", "node-a", START - 20 * SECOND), agent("linkerd-b", "node-b", START));
    const ztunnel = agentsOf(agent("ztunnel-a", "node-a", undefined));
    const { readiness } = readinessOf(
      new Map([
        ["istio", [cniAgentGate(istio, MIN_READY)]],
        ["linkerd", [cniAgentGate(linkerd, MIN_READY)]],
        // Ztunnel is no CNI agent: a node's taint does not wait for it.
        ["istio-ambient", [cniAgentGate(istio, MIN_READY), ztunnelGate(ztunnel)]],
      ]),
    );
    expect(readiness.cniAgentsOn("node-a", "claimed")).to.deep.equal({ kind: "ready", forMs: 20 * SECOND });
    expect(readiness.cniAgentsOn("node-b", "claimed")).to.deep.equal({ kind: "not_ready" });
    expect(readiness.cniAgentsOn("node-c", "claimed")).to.deep.equal({ kind: "absent" });
    expect(readinessOf(new Map()).readiness.cniAgentsOn("node-a")).to.deep.equal({ kind: "absent" });
  });
});
