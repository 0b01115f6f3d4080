// Which pace a broken pod is under: the outage pace when an agent outage explains its breakage (judged when it
// broke), still under the agent gate, the storm breaker and the in-flight caps; every other pod the cluster pace.

import { expect } from "chai";
import type { PodFacts } from "../../../src/detect/facts.js";
import { type AgentFacts, CniAgents } from "../../../src/informer/cni-agent-pods.js";
import { SafetyGuards } from "../../../src/safety/guards.js";
import { decide, isPaced } from "../../../src/safety/policy.js";
import { cniReadiness } from "../../support/agent-readiness.js";
import { podFacts } from "../../support/pod-builders.js";
import { FakeClock } from "../fake-clock.js";

const SECOND = 1_000;
const START = Date.parse("2025-03-04T10:20:00Z");
const MIN_READY = 10 * SECOND;

let serial = 0;
const pod = (overrides: Partial<PodFacts> = {}): PodFacts =>
  podFacts({
    uid: `uid-${++serial}`,
    name: `reviews-${serial}`,
    nodeName: "node-a",
    owner: { kind: "ReplicaSet", name: "reviews-7d9f8b6c5", uid: `owner-${serial}` },
    // Set up when the test starts: a pod breaks when its sandbox is set up, and that time is what an outage explains.
    createdAtMs: START,
    ...overrides,
  });

const agent = (nodeName: string, readySinceMs: number | undefined): AgentFacts => ({
  namespace: "istio-system",
  name: `istio-cni-node-${nodeName}`,
  nodeName,
  readySinceMs,
  seenReadyAtMs: readySinceMs,
});

/** Cluster pace 60/min, outage pace as given (default off), burst 1, in-flight caps as given, the istio rule gated. */
function setup(options: {
  agents: CniAgents;
  outagePerMinute?: number;
  inflightPerNode?: number;
  inflightPerNamespace?: number;
}) {
  const clock = new FakeClock(START);
  const readiness = cniReadiness(options.agents, MIN_READY, { clock });
  const guards = new SafetyGuards({
    limits: {
      deletionsPerMinute: 60,
      outageDeletionsPerMinute: options.outagePerMinute ?? 0,
      deletionBurst: 1,
      inflightPerNode: options.inflightPerNode ?? 0,
      inflightPerNamespace: options.inflightPerNamespace ?? 0,
    },
    loopBackoff: { baseMs: 60 * SECOND, maxMs: 30 * 60 * SECOND },
    storm: { maxBrokenFraction: 0.5, minBroken: 3 },
    readiness,
    clock,
  });
  /** The pod turns broken now, judged as PodStandings judges it. */
  const breaks = (facts: PodFacts) =>
    guards.standingChanged(undefined, {
      facts,
      standing: { meshed: true, broken: true, explained: readiness.sandboxedDuringOutage(facts, "istio") },
    });
  /** decide + the pace commit, as the reconciler does them. */
  const judge = (facts: PodFacts) => {
    const view = guards.view(facts, "istio");
    const decision = decide({
      facts,
      verdict: { broken: true, rule: "istio", reason: "validation failed", terminal: false },
      mode: "delete",
      label: { key: "cni-repair/broken", value: "true" },
      alreadyHandled: false,
      deleteBarePods: false,
      guards: view,
    });
    if (isPaced(decision)) guards.commitPace(`${facts.namespace}/${facts.name}`, view);
    return { view, decision };
  };
  return { clock, guards, readiness, breaks, judge };
}

const deletes = (decision: ReturnType<typeof decide>) => decision.kind === "act" && decision.action === "delete";

describe("safety/outage pace: breakage an agent outage explains is under its own, faster pace", () => {
  it("holds explained pods for min-ready, then deletes them all at once (outage pace off), spending no cluster token", () => {
    const agents = new CniAgents();
    const { clock, breaks, judge } = setup({ agents });
    const broken = Array.from({ length: 5 }, () => pod());
    for (const facts of broken) breaks(facts); // no agent on the node: the outage
    for (const facts of broken)
      expect(judge(facts).decision).to.include({ kind: "hold", reason: "cni_agent_not_ready" });
    agents.store.upsert(agent("node-a", START));
    clock.advance(MIN_READY - 1);
    for (const facts of broken)
      expect(judge(facts).decision).to.include({ kind: "hold", reason: "cni_agent_not_ready" });
    clock.advance(1);
    for (const facts of broken) {
      const { view, decision } = judge(facts);
      expect(deletes(decision), JSON.stringify(decision)).to.equal(true);
      expect(view).to.not.have.property("pace");
      expect(view.outage?.detail).to.equal(
        "broke during the CNI agent outage on node node-a: paced by --max-outage-deletions-per-minute",
      );
    }
    // The explained deletes spent nothing: an unexplained pod still gets the one-token burst.
    agents.store.upsert(agent("node-b", START - 3_600 * SECOND));
    const unexplained = pod({ nodeName: "node-b" });
    breaks(unexplained);
    expect(deletes(judge(unexplained).decision)).to.equal(true);
  });

  it("keeps the pace for breakage nothing explains (the agent Ready for long), with rate_limit holds and turns", () => {
    const agents = new CniAgents();
    agents.store.upsert(agent("node-a", START - 3_600 * SECOND));
    const { clock, breaks, judge } = setup({ agents });
    const [a, b, c] = [pod(), pod(), pod({ nodeName: "node-a" })];
    for (const facts of [a, b]) breaks(facts);
    expect(deletes(judge(a).decision)).to.equal(true);
    const held = judge(b);
    expect(held.view).to.not.have.property("outage");
    expect(held.view.pace?.detail).to.equal(
      "deletions are paced by --max-deletions-per-minute; this pod's turn is in 1 s",
    );
    expect(held.decision).to.deep.include({ kind: "hold", reason: "rate_limit", retryAfterMs: SECOND });
    clock.advance(SECOND);
    expect(deletes(judge(b).decision)).to.equal(true);
    // A broken pod the storm breaker was never told about is not explained either: the safe side.
    expect(judge(c).decision).to.deep.include({ kind: "hold", reason: "rate_limit" });
  });

  it("judges the explanation once, when the pod broke: still explained after the agent has been Ready for long", () => {
    const agents = new CniAgents();
    agents.store.upsert(agent("node-a", START - 5 * SECOND));
    const { clock, breaks, judge } = setup({ agents });
    const early = pod();
    breaks(early); // 5 s after the agent turned Ready: explained
    clock.advance(10 * 60 * SECOND);
    const late = pod({ createdAtMs: clock.now() });
    breaks(late); // set up ten minutes later: nothing explains it
    expect(judge(late).view).to.not.have.property("outage");
    expect(judge(early).view).to.have.property("outage");
  });

  it("keeps the cluster pace for a pod judged before the agent cache listed, set up after its agent had long been Ready", () => {
    // A one-shot scan (and the first moments of run) can see the pods before the agents: the storm breaker then
    // calls every broken pod explained. The pod's own time says otherwise.
    const agents = new CniAgents();
    const { breaks, judge } = setup({ agents, outagePerMinute: 600 });
    const recent = pod({ createdAtMs: START - 60 * SECOND });
    const old = pod({ createdAtMs: START - 2 * 3_600 * SECOND });
    const unknown = pod({ createdAtMs: undefined });
    for (const facts of [recent, old, unknown]) breaks(facts); // no agent listed yet: "explained"
    agents.store.upsert(agent("node-a", START - 3_600 * SECOND));
    expect(judge(recent).view).to.not.have.property("outage");
    expect(judge(unknown).view).to.not.have.property("outage");
    // Set up before the agent turned Ready: the outage did break it.
    expect(judge(old).view).to.have.property("outage");
  });

  it("paces the broken replacement of a pod we deleted, even in an outage (a repeat is no outage's fault)", () => {
    const agents = new CniAgents();
    agents.store.upsert(agent("node-a", START - 60 * SECOND));
    const { clock, guards, readiness, breaks, judge } = setup({ agents });
    const owner = { kind: "ReplicaSet", name: "ratings-5c8f", uid: "owner-ratings" };
    const first = pod({ owner });
    breaks(first);
    expect(judge(first).view).to.have.property("outage");
    guards.beforeDelete(first);
    guards.afterDelete(first, "deleted");
    guards.podGone(first.uid);
    clock.advance(5 * 60 * SECOND);
    // The agent went down again; the owner's replacement on the node breaks once more, explained.
    agents.store.upsert(agent("node-a", clock.now() - 5 * SECOND));
    clock.advance(MIN_READY);
    const replacement = pod({ owner, createdAtMs: START + 60 * SECOND });
    breaks(replacement);
    expect(readiness.sandboxedDuringOutage(replacement, "istio")).to.equal(true);
    // The loop backoff counts it as a repeat (its wait is over): it keeps the pace.
    const { view } = judge(replacement);
    expect(view).to.not.have.property("outage");
  });

  it("paces explained pods at the outage pace, with rate_limit holds and turns, apart from the cluster pace", () => {
    const agents = new CniAgents();
    const { clock, breaks, judge } = setup({ agents, outagePerMinute: 600 });
    const [a, b, c] = [pod(), pod(), pod()];
    for (const facts of [a, b, c]) breaks(facts);
    agents.store.upsert(agent("node-a", START));
    clock.advance(MIN_READY);
    expect(deletes(judge(a).decision)).to.equal(true);
    const held = judge(b);
    expect(held.decision).to.deep.include({ kind: "hold", reason: "rate_limit", retryAfterMs: 100 });
    expect(held.view.pace?.detail).to.equal(
      "deletions are paced by --max-outage-deletions-per-minute; this pod's turn is in 1 s",
    );
    // c lines up behind b's reserved turn.
    expect(judge(c).decision).to.deep.include({ kind: "hold", reason: "rate_limit", retryAfterMs: 200 });
    clock.advance(100);
    expect(deletes(judge(b).decision)).to.equal(true);
    expect(judge(c).decision).to.deep.include({ kind: "hold", reason: "rate_limit", retryAfterMs: 100 });
    // The cluster pace was never spent: an unexplained pod gets its burst of one now.
    agents.store.upsert(agent("node-b", START - 3_600 * SECOND));
    const unexplained = pod({ nodeName: "node-b" });
    breaks(unexplained);
    expect(deletes(judge(unexplained).decision)).to.equal(true);
  });

  it("still holds explained pods at the per-node and per-namespace in-flight caps", () => {
    const agents = new CniAgents();
    const { clock, guards, breaks, judge } = setup({ agents, inflightPerNode: 2, inflightPerNamespace: 3 });
    const onA = [pod(), pod(), pod()];
    const onB = [pod({ nodeName: "node-b" }), pod({ nodeName: "node-b" })];
    for (const facts of [...onA, ...onB]) breaks(facts);
    agents.store.upsert(agent("node-a", START));
    agents.store.upsert(agent("node-b", START));
    clock.advance(MIN_READY);
    const deleteIfAllowed = (facts: PodFacts) => {
      const { decision } = judge(facts);
      if (deletes(decision)) {
        guards.beforeDelete(facts);
        guards.afterDelete(facts, "deleted");
      }
      return decision;
    };
    expect(deletes(deleteIfAllowed(onA[0] as PodFacts))).to.equal(true);
    expect(deletes(deleteIfAllowed(onA[1] as PodFacts))).to.equal(true);
    expect(deleteIfAllowed(onA[2] as PodFacts)).to.include({ kind: "hold", reason: "node_inflight" });
    expect(deletes(deleteIfAllowed(onB[0] as PodFacts))).to.equal(true);
    expect(deleteIfAllowed(onB[1] as PodFacts)).to.include({ kind: "hold", reason: "namespace_inflight" });
    guards.podGone((onA[0] as PodFacts).uid);
    expect(deletes(deleteIfAllowed(onA[2] as PodFacts))).to.equal(true);
  });

  it("still holds explained pods while a storm breaker is open", () => {
    const agents = new CniAgents();
    agents.store.upsert(agent("node-a", START - 3_600 * SECOND));
    agents.store.upsert(agent("node-b", START - 5 * SECOND));
    const { clock, breaks, judge } = setup({ agents });
    for (let i = 0; i < 4; i++) breaks(pod()); // nothing explains these: node-a's and the cluster's breakers open
    const explained = pod({ nodeName: "node-b" });
    breaks(explained);
    clock.advance(MIN_READY);
    expect(judge(explained).decision).to.include({ kind: "hold", reason: "storm" });
  });
});
