// SafetyGuards: the GuardView each guard contributes, with the node and the numbers in its wording, and the bookkeeping.

import { expect } from "chai";
import type { PodFacts } from "../../../src/detect/facts.js";
import { type AgentFacts, CniAgents } from "../../../src/informer/cni-agent-pods.js";
import { AgentReadiness, type AgentReadinessOptions } from "../../../src/safety/agent-readiness.js";
import { type GuardOptions, SafetyGuards } from "../../../src/safety/guards.js";
import { cniAgentGate } from "../../support/agent-readiness.js";
import { uniquePod } from "../../support/pod-builders.js";
import { FakeClock } from "../fake-clock.js";

const SECOND = 1_000;
const START = Date.parse("2025-03-04T10:20:00Z");
const OWNER = { kind: "ReplicaSet", name: "reviews-7d9f8b6c5", uid: "owner-1" };

const pod = (overrides: Partial<PodFacts> = {}): PodFacts =>
  uniquePod({ nodeName: "node-a", owner: OWNER, ...overrides });

const agent = (name: string, nodeName: string, readySinceMs: number | undefined): AgentFacts => ({
  namespace: "istio-system",
  name,
  nodeName,
  readySinceMs,
  seenReadyAtMs: undefined,
});

type Overrides = {
  limits?: Partial<GuardOptions["limits"]>;
  nodeAgentGates?: AgentReadinessOptions["gatesByRule"];
  onTurnMoved?: GuardOptions["onTurnMoved"];
  onStormTransition?: GuardOptions["onStormTransition"];
  readyBasis?: AgentReadinessOptions["basis"];
};

/** The istio rule's CNI agent gate, as the pipeline builds it. */
const cniGate = (agents: CniAgents, minReadyMs = 10 * SECOND) =>
  new Map([["istio", [cniAgentGate(agents, minReadyMs)]]]);

function setup(overrides: Overrides = {}) {
  const clock = new FakeClock(START);
  const readiness = new AgentReadiness({
    gatesByRule: overrides.nodeAgentGates ?? new Map(),
    ...(overrides.readyBasis && { basis: overrides.readyBasis }),
    clock,
  });
  const guards = new SafetyGuards({
    limits: {
      deletionsPerMinute: 60,
      outageDeletionsPerMinute: 600,
      deletionBurst: 2,
      inflightPerNode: 0,
      inflightPerNamespace: 0,
      ...overrides.limits,
    },
    loopBackoff: { baseMs: 60 * SECOND, maxMs: 30 * 60 * SECOND },
    storm: { maxBrokenFraction: 0.5, minBroken: 3 },
    readiness,
    ...(overrides.onTurnMoved && { onTurnMoved: overrides.onTurnMoved }),
    ...(overrides.onStormTransition && { onStormTransition: overrides.onStormTransition }),
    clock,
  });
  return { clock, guards, readiness };
}

function gated(agents: AgentFacts[], readyBasis?: AgentReadinessOptions["basis"]) {
  const istio = new CniAgents();
  for (const a of agents) istio.store.upsert(a);
  return setup({ nodeAgentGates: cniGate(istio), ...(readyBasis && { readyBasis }) });
}

describe("safety/guards", () => {
  it("has no objection to a pod on a quiet node", () => {
    const { guards } = setup();
    expect(guards.view(pod(), "istio")).to.deep.equal({});
  });

  describe("loop backoff", () => {
    it("holds a broken replacement, naming the delete count, the node and the seconds", () => {
      const { clock, guards } = setup();
      const first = pod({ createdAtMs: START - 60 * SECOND });
      guards.beforeDelete(first);
      guards.afterDelete(first, "deleted");
      clock.advance(5 * SECOND);
      const replacement = pod({ createdAtMs: START + 2 * SECOND });
      expect(guards.view(replacement, "istio")).to.deep.equal({
        loop: {
          waitMs: 55 * SECOND,
          detail:
            "replacement came back broken 5 s after our delete #1 of this owner's pod on node node-a; next delete in 55 s",
        },
      });
    });

    it("rounds the seconds since to the nearest, and the seconds left up", () => {
      const { clock, guards } = setup();
      const first = pod({ createdAtMs: START - 60 * SECOND });
      guards.afterDelete(first, "deleted");
      clock.advance(4_400);
      expect(guards.view(pod({ createdAtMs: START }), "istio").loop?.detail).to.match(
        /broken 4 s after our delete #1 .* next delete in 56 s$/,
      );
    });

    it("records nothing for a delete that did not happen", () => {
      const { clock, guards } = setup();
      const first = pod({ createdAtMs: START - 60 * SECOND });
      guards.beforeDelete(first);
      guards.afterDelete(first, "failed");
      clock.advance(SECOND);
      expect(guards.view(pod({ createdAtMs: START + SECOND }), "istio")).to.deep.equal({});
    });
  });

  describe("storm breaker", () => {
    const meshed = (broken: boolean) => ({ meshed: true, broken });

    it("holds with the node's counts once its breaker opens", () => {
      const { guards } = setup();
      for (let i = 0; i < 20; i++)
        guards.standingChanged(undefined, { facts: pod({ nodeName: "node-b" }), standing: meshed(false) });
      guards.standingChanged(undefined, { facts: pod(), standing: meshed(false) });
      const opened = [0, 1, 2].flatMap(() =>
        guards.standingChanged(undefined, { facts: pod(), standing: meshed(true) }),
      );
      expect(opened).to.deep.equal([{ scope: "node", node: "node-a", open: true }]);
      expect(guards.view(pod(), "istio")).to.deep.equal({
        storm: { detail: "3 of 4 meshed pods broken on node node-a (more than 50%)" },
      });
      expect(guards.view(pod({ nodeName: "node-b" }), "istio")).to.deep.equal({});
    });

    it("holds with the cluster's counts when only the cluster breaker is open", () => {
      const { guards } = setup();
      for (const node of ["n1", "n2", "n3", "n4"]) {
        guards.standingChanged(undefined, { facts: pod({ nodeName: node }), standing: meshed(true) });
        guards.standingChanged(undefined, { facts: pod({ nodeName: node }), standing: meshed(false) });
      }
      const fifth = pod({ nodeName: "n1" });
      expect(guards.standingChanged(undefined, { facts: fifth, standing: meshed(true) })).to.deep.equal([
        { scope: "cluster", node: "", open: true },
      ]);
      expect(guards.view(pod({ nodeName: "n2" }), "istio")).to.deep.equal({
        storm: { detail: "5 of 9 meshed pods broken in the cluster (more than 50%)" },
      });
      expect(
        guards.standingChanged({ facts: fifth, standing: meshed(true) }, { facts: fifth, standing: meshed(false) }),
      ).to.deep.equal([{ scope: "cluster", node: "", open: false }]);
      expect(guards.view(pod({ nodeName: "n2" }), "istio")).to.deep.equal({});
    });
  });

  describe("CNI agent gate", () => {
    it("holds without a retry time when no agent on the node is Ready", () => {
      const { guards } = gated([agent("cni-a", "node-a", undefined), agent("cni-b", "node-b", START - 60 * SECOND)]);
      expect(guards.view(pod(), "istio")).to.deep.equal({
        agent: { reason: "cni_agent_not_ready", detail: "no Ready CNI agent pod on node node-a" },
      });
    });

    it("says loudly when no agent pod matches anywhere", () => {
      const { guards } = gated([]);
      expect(guards.view(pod(), "istio")).to.deep.equal({
        agent: {
          reason: "cni_agent_not_ready",
          detail:
            "no Ready CNI agent pod on node node-a (no CNI agent pod matches the selector anywhere: check --cni-agent-selector)",
        },
      });
    });

    it("holds for the rest of the minimum Ready time, saying how long so far", () => {
      const { clock, guards } = gated([agent("cni-a", "node-a", START - 4 * SECOND)]);
      expect(guards.view(pod(), "istio")).to.deep.equal({
        agent: {
          reason: "cni_agent_not_ready",
          waitMs: 6 * SECOND,
          detail: "the CNI agent on node node-a has been Ready for 4 s of the 10 s required",
        },
      });
      clock.advance(5_999);
      expect(guards.view(pod(), "istio").agent?.waitMs).to.equal(1);
      clock.advance(1);
      expect(guards.view(pod(), "istio")).to.deep.equal({});
    });

    it("uses the longest-Ready of several agents on the node", () => {
      const { guards } = gated([
        agent("new", "node-a", START - 1 * SECOND),
        agent("old", "node-a", START - 11 * SECOND),
      ]);
      expect(guards.view(pod(), "istio")).to.deep.equal({});
    });

    it("run ('observed') counts from its own first sight; a one-shot command ('claimed') from a past kubelet time", () => {
      const seenNow = (name: string, node: string, readySinceMs: number | undefined): AgentFacts => ({
        ...agent(name, node, readySinceMs),
        seenReadyAtMs: START,
      });
      const hourAgo = [seenNow("cni-a", "node-a", START - 3_600 * SECOND)];
      expect(gated(hourAgo).guards.view(pod(), "istio").agent?.detail).to.equal(
        "the CNI agent on node node-a has been Ready for 0 s of the 10 s required",
      );
      expect(gated(hourAgo, "claimed").guards.view(pod(), "istio")).to.deep.equal({});
      // Fail-safe: a future or missing kubelet time counts from the command's own start, and says so.
      for (const readySinceMs of [START + 3_600 * SECOND, Number.POSITIVE_INFINITY]) {
        const { clock, guards } = gated([seenNow("cni-a", "node-a", readySinceMs)], "claimed");
        expect(guards.view(pod(), "istio").agent).to.deep.include({
          reason: "cni_agent_not_ready",
          waitMs: 10 * SECOND,
        });
        expect(guards.view(pod(), "istio").agent?.detail).to.include(
          "(by the kubelet's Ready time; without one, or with one in the future, counted from this command's start)",
        );
        clock.advance(10 * SECOND);
        expect(guards.view(pod(), "istio").agent === undefined, String(readySinceMs)).to.equal(
          readySinceMs === Number.POSITIVE_INFINITY,
        );
      }
    });

    it("applies only to rules that have agents configured, and not at all when off", () => {
      expect(gated([]).guards.view(pod(), "linkerd")).to.deep.equal({});
      expect(setup({ nodeAgentGates: new Map() }).guards.view(pod(), "istio")).to.deep.equal({});
    });
  });

  describe("in-flight caps", () => {
    it("holds at the node cap, naming the node, until the deleted pod is gone", () => {
      const { guards } = setup({ limits: { inflightPerNode: 1 } });
      const deleted = pod();
      guards.beforeDelete(deleted);
      guards.afterDelete(deleted, "deleted");
      expect(guards.view(pod(), "istio")).to.deep.equal({
        inflight: {
          reason: "node_inflight",
          detail: "too many pods deleted by us are still terminating on node node-a",
        },
      });
      expect(guards.view(pod({ nodeName: "node-b" }), "istio")).to.deep.equal({});
      expect(guards.podGone(deleted.uid)).to.deep.equal({ node: "node-a", namespace: "shop" });
      expect(guards.podGone(deleted.uid)).to.equal(undefined);
      expect(guards.view(pod(), "istio")).to.deep.equal({});
    });

    it("holds at the namespace cap, naming the namespace", () => {
      const { guards } = setup({ limits: { inflightPerNamespace: 1 } });
      guards.beforeDelete(pod({ namespace: "billing", nodeName: "node-b" }));
      expect(guards.view(pod({ namespace: "billing" }), "istio")).to.deep.equal({
        inflight: {
          reason: "namespace_inflight",
          detail: "too many pods deleted by us are still terminating in namespace billing",
        },
      });
    });

    it("frees the slot at once when the delete did not happen", () => {
      const { guards } = setup({ limits: { inflightPerNode: 1 } });
      const failed = pod();
      guards.beforeDelete(failed);
      expect(guards.view(pod(), "istio")).to.have.property("inflight");
      guards.afterDelete(failed, "failed");
      expect(guards.view(pod(), "istio")).to.deep.equal({});
    });
  });

  it("reports every objection at once, for decide to order", () => {
    const istio = new CniAgents();
    const clock = new FakeClock(START);
    const guards = new SafetyGuards({
      limits: {
        deletionsPerMinute: 60,
        outageDeletionsPerMinute: 600,
        deletionBurst: 1,
        inflightPerNode: 1,
        inflightPerNamespace: 0,
      },
      loopBackoff: { baseMs: 60 * SECOND, maxMs: 30 * 60 * SECOND },
      storm: { maxBrokenFraction: 0.5, minBroken: 1 },
      readiness: new AgentReadiness({ gatesByRule: cniGate(istio), clock }),
      clock,
    });
    const deleted = pod({ createdAtMs: START - 60 * SECOND });
    guards.beforeDelete(deleted);
    guards.afterDelete(deleted, "deleted");
    guards.standingChanged(undefined, { facts: pod(), standing: { meshed: true, broken: true } });
    const view = guards.view(pod({ createdAtMs: START }), "istio");
    expect(Object.keys(view)).to.have.members(["loop", "storm", "agent", "inflight"]);
  });

  it("paces deletion tokens and gives a forgotten pod's turn back", () => {
    const { clock, guards } = setup({ limits: { deletionsPerMinute: 60, deletionBurst: 1 } });
    expect(guards.commitPace("shop/a")).to.equal(0);
    expect(guards.commitPace("shop/b")).to.equal(SECOND);
    guards.forgetPod("shop/b");
    expect(guards.commitPace("shop/c")).to.equal(SECOND);
    clock.advance(SECOND);
    expect(guards.commitPace("shop/c")).to.equal(0);
  });

  it("peeks at the pace in the view without spending it; only commitPace spends", () => {
    const { guards } = setup({ limits: { deletionsPerMinute: 60, deletionBurst: 1 } });
    const a = pod({ name: "a" });
    expect(guards.view(a, "istio")).to.not.have.property("pace");
    expect(guards.view(a, "istio")).to.not.have.property("pace");
    expect(guards.commitPace("shop/a")).to.equal(0);
    expect(guards.view(pod({ name: "b" }), "istio").pace?.waitMs).to.equal(SECOND);
  });

  it("a skipped delete gives its token back and moves the waiting pods up; a failed one does not", () => {
    const moved: [string, number][] = [];
    const { guards } = setup({
      limits: { deletionsPerMinute: 60, deletionBurst: 1 },
      onTurnMoved: (key, waitMs) => moved.push([key, waitMs]),
    });
    const a = pod({ name: "a" });
    expect(guards.commitPace("shop/a")).to.equal(0);
    expect(guards.commitPace("shop/b")).to.equal(SECOND);
    expect(guards.commitPace("shop/c")).to.equal(2 * SECOND);
    guards.beforeDelete(a);
    guards.afterDelete(a, "skipped");
    expect(moved).to.deep.equal([
      ["shop/b", 0],
      ["shop/c", SECOND],
    ]);
    expect(guards.commitPace("shop/b")).to.equal(0);
    const b = pod({ name: "b" });
    guards.beforeDelete(b);
    guards.afterDelete(b, "failed");
    expect(guards.commitPace("shop/d")).to.equal(2 * SECOND);
  });

  it("a new leadership term starts with no burst: the first turn is one interval away", () => {
    const { clock, guards } = setup({ limits: { deletionsPerMinute: 60, deletionBurst: 10 } });
    guards.startTerm();
    expect(guards.commitPace("shop/a")).to.equal(SECOND);
    clock.advance(SECOND);
    expect(guards.commitPace("shop/a")).to.equal(0);
    expect(guards.commitPace("shop/b")).to.equal(SECOND);
  });

  it("scan's dry pace answers in order without touching the real one", () => {
    const { guards } = setup({ limits: { deletionsPerMinute: 60, deletionBurst: 1 } });
    const dry = guards.dryPaces();
    expect(guards.commitPace("shop/a", {}, dry)).to.equal(0);
    expect(guards.view(pod({ name: "b" }), "istio", { paces: dry }).pace?.waitMs).to.equal(SECOND);
    expect(guards.commitPace("shop/a")).to.equal(0);
  });

  it("explains breakage by a CNI agent outage: none Ready, or Ready (by the kubelet's time) under min-ready plus a minute", () => {
    const { readiness } = gated([
      agent("long", "node-a", START - 10 * 60 * SECOND),
      agent("fresh", "node-c", START - 30 * SECOND),
      agent("down", "node-d", undefined),
    ]);
    // Pods set up now on each node.
    const on = (nodeName: string) => pod({ nodeName, sandboxSinceMs: START });
    expect(readiness.sandboxedDuringOutage(on("node-a"), "istio")).to.equal(false);
    expect(readiness.sandboxedDuringOutage(on("node-b"), "istio")).to.equal(true);
    expect(readiness.sandboxedDuringOutage(on("node-c"), "istio")).to.equal(true);
    expect(readiness.sandboxedDuringOutage(on("node-d"), "istio")).to.equal(true);
    // No gate for the rule (or --cni-agent-gate=off): nothing explains breakage.
    expect(readiness.sandboxedDuringOutage(on("node-b"), "linkerd")).to.equal(false);
  });

  it("counts the pod being deleted as broken for the storm breaker from the moment the DELETE is sent", () => {
    const transitions: unknown[] = [];
    const { guards } = setup({ onStormTransition: (t) => transitions.push(t) });
    const pods = [pod(), pod(), pod(), pod()];
    for (const p of pods) guards.standingChanged(undefined, { facts: p, standing: { meshed: true, broken: false } });
    for (const p of pods.slice(0, 2))
      guards.standingChanged(
        { facts: p, standing: { meshed: true, broken: false } },
        { facts: p, standing: { meshed: true, broken: true } },
      );
    const [first] = pods as [PodFacts];
    guards.beforeDelete(first);
    // The watch shows it terminating before the DELETE's answer arrives: still counted.
    guards.standingChanged({ facts: first, standing: { meshed: true, broken: true } }, undefined);
    guards.afterDelete(first, "deleted");
    guards.standingChanged(undefined, { facts: pods[2] as PodFacts, standing: { meshed: true, broken: true } });
    expect(transitions).to.deep.equal([
      { scope: "node", node: "node-a", open: true },
      { scope: "cluster", node: "", open: true },
    ]);
  });
});

describe("safety/guards: when the node's agents turned Ready (the ambient enrolment grace)", () => {
  const ztunnelGate = (agents: CniAgents) => ({
    agents,
    reason: "ztunnel_not_ready" as const,
    what: "ztunnel",
    selectorFlag: "--ztunnel-selector",
    minReadyMs: 10 * SECOND,
  });

  it("is the later of the CNI agent's and ztunnel's Ready times, each as this controller first saw it", () => {
    const cni = new CniAgents();
    const ztunnel = new CniAgents();
    const { clock, readiness } = setup({
      nodeAgentGates: new Map([["istio-ambient", [...(cniGate(cni).get("istio") ?? []), ztunnelGate(ztunnel)]]]),
    });
    const readyPod = (name: string, since: number) => ({
      metadata: { namespace: "istio-system", name },
      spec: { nodeName: "node-a" },
      status: {
        phase: "Running",
        conditions: [{ type: "Ready", status: "True", lastTransitionTime: new Date(since) }],
      },
    });
    // The CNI agent's kubelet time is an hour old, but we first see it now: it counts from now.
    cni.store.upsert(cni.toFacts(readyPod("istio-cni-node-a", START - 3_600 * SECOND), clock.now()) as AgentFacts);
    expect(readiness.graceStart("node-a", "istio-ambient")).to.deep.equal({
      atMs: START,
      cause: "CNI agent on node node-a turned Ready (seen by this controller)",
    });
    clock.advance(30 * SECOND);
    ztunnel.store.upsert(ztunnel.toFacts(readyPod("ztunnel-a", START + 25 * SECOND), clock.now()) as AgentFacts);
    expect(readiness.graceStart("node-a", "istio-ambient")).to.deep.equal({
      atMs: START + 30 * SECOND,
      cause: "ztunnel on node node-a turned Ready (seen by this controller)",
    });
    // scan goes by the kubelet's time.
    expect(readiness.graceStart("node-a", "istio-ambient", "claimed")?.atMs).to.equal(START + 25 * SECOND);
  });

  it("adds nothing for an agent with none Ready on the node (its gate holds the pod), nor without gates", () => {
    const { readiness } = setup({ nodeAgentGates: new Map([["istio-ambient", [ztunnelGate(new CniAgents())]]]) });
    expect(readiness.graceStart("node-a", "istio-ambient")).to.equal(undefined);
    expect(readiness.graceStart("node-a", "istio")).to.equal(undefined);
  });
});
