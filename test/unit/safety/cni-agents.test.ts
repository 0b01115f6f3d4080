// CNI agents: toAgentFacts from raw Pod JSON (never throws), and how long a node's agent has been Ready.

import { expect } from "chai";
import fc from "fast-check";
import { type AgentFacts, agentKey, CniAgents, toAgentFacts } from "../../../src/informer/cni-agent-pods.js";
import { readyForMs } from "../../../src/safety/cni-agents.js";
import type { Instant } from "../../../src/util/clock.js";
import { anyValue } from "../detect/arbitraries.js";

const READY_AT = "2025-03-04T10:14:30Z";

/** A moment on a wall clock and a monotonic clock that read the same (no one has set the wall clock). */
const inStep = (ms: number): Instant => ({ wallMs: ms, monoMs: ms });

/** An istio-cni-node DaemonSet pod as the API server returns it, Running and Ready; a fresh copy each call. */
function agentPodJson() {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "istio-cni-node-7xk2p",
      generateName: "istio-cni-node-",
      namespace: "istio-system",
      uid: "3f1e2d4c-0000-4000-8000-00000000cafe",
      resourceVersion: "4711000",
      creationTimestamp: "2025-03-04T10:14:02Z",
      labels: { "k8s-app": "istio-cni-node", "controller-revision-hash": "6d9c8b7f5", "pod-template-generation": "3" },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "DaemonSet",
          name: "istio-cni-node",
          uid: "8c1d2e3f-0000-4000-8000-0000000000d5",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    } as Record<string, unknown>,
    spec: {
      nodeName: "node-a",
      serviceAccountName: "istio-cni",
      hostNetwork: true,
      containers: [{ name: "install-cni", image: "docker.io/istio/install-cni:1.24.0" }],
    } as Record<string, unknown>,
    status: {
      phase: "Running",
      hostIP: "10.0.0.11",
      podIP: "10.0.0.11",
      startTime: "2025-03-04T10:14:02Z",
      conditions: [
        {
          type: "PodReadyToStartContainers",
          status: "True",
          lastProbeTime: null,
          lastTransitionTime: "2025-03-04T10:14:05Z",
        },
        { type: "Initialized", status: "True", lastProbeTime: null, lastTransitionTime: "2025-03-04T10:14:02Z" },
        { type: "Ready", status: "True", lastProbeTime: null, lastTransitionTime: READY_AT },
        { type: "ContainersReady", status: "True", lastProbeTime: null, lastTransitionTime: READY_AT },
        { type: "PodScheduled", status: "True", lastProbeTime: null, lastTransitionTime: "2025-03-04T10:14:02Z" },
      ] as Record<string, unknown>[],
      containerStatuses: [{ name: "install-cni", ready: true, restartCount: 0, started: true }],
    } as Record<string, unknown>,
  };
}

const readyCondition = (pod: ReturnType<typeof agentPodJson>) =>
  (pod.status.conditions as Record<string, unknown>[]).find((c) => c.type === "Ready") as Record<string, unknown>;

const agent = (name: string, nodeName: string | undefined, readySinceMs: number | undefined): AgentFacts => ({
  namespace: "istio-system",
  name,
  nodeName,
  readySinceMs,
  seenReadyAtMs: undefined,
});

describe("safety/cni-agents", () => {
  describe("toAgentFacts", () => {
    it("reads a Running, Ready agent pod: Ready since its Ready condition's transition", () => {
      expect(toAgentFacts(agentPodJson())).to.deep.equal({
        namespace: "istio-system",
        name: "istio-cni-node-7xk2p",
        nodeName: "node-a",
        readySinceMs: Date.parse(READY_AT),
        seenReadyAtMs: undefined,
      });
    });

    it("reads the transition time as a Date too (as the client library deserializes it)", () => {
      const pod = agentPodJson();
      readyCondition(pod).lastTransitionTime = new Date(READY_AT);
      expect(toAgentFacts(pod)?.readySinceMs).to.equal(Date.parse(READY_AT));
    });

    it("is not Ready while the Ready condition is False or Unknown, or missing", () => {
      for (const status of ["False", "Unknown", true, "true"]) {
        const pod = agentPodJson();
        readyCondition(pod).status = status;
        expect(toAgentFacts(pod)?.readySinceMs, String(status)).to.equal(undefined);
      }
      const pod = agentPodJson();
      pod.status.conditions = (pod.status.conditions as Record<string, unknown>[]).filter((c) => c.type !== "Ready");
      expect(toAgentFacts(pod)?.readySinceMs).to.equal(undefined);
    });

    it("is not Ready unless Running, whatever the condition says", () => {
      for (const phase of ["Pending", "Succeeded", "Failed", "Unknown", undefined]) {
        const pod = agentPodJson();
        pod.status.phase = phase;
        expect(toAgentFacts(pod), String(phase)).to.include({ readySinceMs: undefined, name: "istio-cni-node-7xk2p" });
      }
    });

    it("is not Ready while terminating; a null deletionTimestamp is not terminating", () => {
      const going = agentPodJson();
      going.metadata.deletionTimestamp = "2025-03-04T10:16:00Z";
      going.metadata.deletionGracePeriodSeconds = 30;
      expect(toAgentFacts(going)?.readySinceMs).to.equal(undefined);
      const notGoing = agentPodJson();
      notGoing.metadata.deletionTimestamp = null;
      expect(toAgentFacts(notGoing)?.readySinceMs).to.equal(Date.parse(READY_AT));
    });

    it("marks Ready without a usable time as Ready since an unknown time (+Infinity), never the epoch", () => {
      for (const at of [undefined, null, "", "yesterday", 1_741_083_270_000, new Date(Number.NaN), {}]) {
        const pod = agentPodJson();
        readyCondition(pod).lastTransitionTime = at;
        expect(toAgentFacts(pod)?.readySinceMs, String(at)).to.equal(Number.POSITIVE_INFINITY);
      }
    });

    it("keeps a pod not yet scheduled, without a node", () => {
      const pod = agentPodJson();
      delete pod.spec.nodeName;
      pod.status = { phase: "Pending" };
      expect(toAgentFacts(pod)).to.deep.equal({
        namespace: "istio-system",
        name: "istio-cni-node-7xk2p",
        nodeName: undefined,
        readySinceMs: undefined,
        seenReadyAtMs: undefined,
      });
    });

    it("rejects objects without a string namespace and name", () => {
      for (const [field, value] of [
        ["name", undefined],
        ["namespace", undefined],
        ["name", 7],
        ["namespace", null],
        ["namespace", ["istio-system"]],
      ] as const) {
        const pod = agentPodJson();
        pod.metadata[field] = value;
        expect(toAgentFacts(pod), `${field}=${String(value)}`).to.equal(undefined);
      }
    });

    it("copes with malformed shapes, keeping what is usable", () => {
      const base = () => agentPodJson();
      const named = { namespace: "istio-system", name: "istio-cni-node-7xk2p", seenReadyAtMs: undefined };
      const ready = Date.parse(READY_AT);
      const cases: [string, unknown, AgentFacts | undefined][] = [
        ["null", null, undefined],
        ["undefined", undefined, undefined],
        ["a number", 42, undefined],
        ["a string", "istio-cni-node", undefined],
        ["an array", [agentPodJson()], undefined],
        ["metadata null", { ...base(), metadata: null }, undefined],
        ["metadata a string", { ...base(), metadata: "x" }, undefined],
        ["spec null", { ...base(), spec: null }, { ...named, nodeName: undefined, readySinceMs: ready }],
        [
          "nodeName a number",
          { ...base(), spec: { nodeName: 3 } },
          { ...named, nodeName: undefined, readySinceMs: ready },
        ],
        ["status null", { ...base(), status: null }, { ...named, nodeName: "node-a", readySinceMs: undefined }],
        [
          "conditions an object",
          { ...base(), status: { phase: "Running", conditions: { type: "Ready", status: "True" } } },
          { ...named, nodeName: "node-a", readySinceMs: undefined },
        ],
        [
          "conditions with junk",
          { ...base(), status: { phase: "Running", conditions: [null, 5, "Ready", [], {}] } },
          { ...named, nodeName: "node-a", readySinceMs: undefined },
        ],
        [
          "junk around a Ready condition",
          {
            ...base(),
            status: {
              phase: "Running",
              conditions: [null, { type: "Ready", status: "True", lastTransitionTime: READY_AT }, 7],
            },
          },
          { ...named, nodeName: "node-a", readySinceMs: ready },
        ],
      ];
      for (const [name, value, expected] of cases) expect(toAgentFacts(value), name).to.deep.equal(expected);
    });

    it("property: never throws on anything, and returns well-typed facts or undefined", () => {
      const check = (value: unknown) => {
        const facts = toAgentFacts(value);
        if (facts === undefined) return;
        expect(facts.namespace).to.be.a("string");
        expect(facts.name).to.be.a("string");
        if (facts.nodeName !== undefined) expect(facts.nodeName).to.be.a("string");
        if (facts.readySinceMs !== undefined) expect(Number.isNaN(facts.readySinceMs)).to.equal(false);
      };
      fc.assert(fc.property(fc.anything(), check));
      fc.assert(fc.property(anyValue, check));
    });

    it("property: never throws on pod-shaped objects with anything in any field", () => {
      const field = fc.option(anyValue, { nil: undefined });
      const conditionArb = fc.oneof(
        anyValue,
        fc.record({
          type: fc.oneof(fc.constant("Ready"), anyValue),
          status: fc.oneof(fc.constant("True"), anyValue),
          lastTransitionTime: fc.oneof(fc.constant(READY_AT), fc.date({ noInvalidDate: false }), anyValue),
        }),
      );
      const podArb = fc.record({
        metadata: fc.oneof(
          anyValue,
          fc.record({
            namespace: fc.oneof(fc.string(), field),
            name: fc.oneof(fc.string(), field),
            deletionTimestamp: field,
          }),
        ),
        spec: fc.oneof(anyValue, fc.record({ nodeName: fc.oneof(fc.string(), field) })),
        status: fc.oneof(
          anyValue,
          fc.record({
            phase: fc.oneof(fc.constant("Running"), field),
            conditions: fc.oneof(fc.array(conditionArb), field),
          }),
        ),
      });
      fc.assert(
        fc.property(podArb, (pod) => {
          const facts = toAgentFacts(pod);
          if (facts?.readySinceMs !== undefined) expect(Number.isNaN(facts.readySinceMs)).to.equal(false);
        }),
      );
    });
  });

  describe("CniAgents", () => {
    const NOW = Date.parse("2025-03-04T10:20:00Z");

    it("has no Ready agent on a node it knows nothing about", () => {
      const agents = new CniAgents();
      expect(readyForMs(agents, "node-a", inStep(NOW))).to.equal(undefined);
      expect(agents.count).to.equal(0);
      expect(agents.readyCount).to.equal(0);
    });

    it("takes the longest-Ready agent among several on the node, ignoring those not Ready", () => {
      const agents = new CniAgents();
      agents.store.upsert(agent("old-going", "node-a", undefined));
      agents.store.upsert(agent("new", "node-a", NOW - 3_000));
      agents.store.upsert(agent("older", "node-a", NOW - 40_000));
      agents.store.upsert(agent("elsewhere", "node-b", NOW - 100_000));
      agents.store.upsert(agent("unscheduled", undefined, NOW - 500_000));
      expect(readyForMs(agents, "node-a", inStep(NOW))).to.equal(40_000);
      expect(readyForMs(agents, "node-b", inStep(NOW))).to.equal(100_000);
      expect(readyForMs(agents, "node-c", inStep(NOW))).to.equal(undefined);
      expect(agents.count).to.equal(5);
      expect(agents.readyCount).to.equal(4);
    });

    it("follows the store: an agent that goes away or turns NotReady no longer counts", () => {
      const agents = new CniAgents();
      const older = agent("older", "node-a", NOW - 40_000);
      agents.store.upsert(older);
      agents.store.upsert(agent("new", "node-a", NOW - 3_000));
      agents.store.remove(agentKey(older));
      expect(readyForMs(agents, "node-a", inStep(NOW))).to.equal(3_000);
      agents.store.upsert(agent("new", "node-a", undefined));
      expect(readyForMs(agents, "node-a", inStep(NOW))).to.equal(undefined);
      expect(agents.count).to.equal(1);
      expect(agents.readyCount).to.equal(0);
    });

    it("counts an agent Ready since a moment after now (clock skew) as Ready for 0 ms", () => {
      const agents = new CniAgents();
      agents.store.upsert(agent("skewed", "node-a", NOW + 2_000));
      expect(readyForMs(agents, "node-a", inStep(NOW))).to.equal(0);
    });

    it("keys agents by namespace and name", () => {
      expect(agentKey(agent("istio-cni-node-7xk2p", "node-a", 0))).to.equal("istio-system/istio-cni-node-7xk2p");
      const fromJson = toAgentFacts(agentPodJson());
      const agents = new CniAgents();
      if (fromJson) agents.store.upsert(fromJson);
      expect(readyForMs(agents, "node-a", inStep(Date.parse(READY_AT) + 12_000))).to.equal(12_000);
    });
  });

  describe("fail-safe Ready time", () => {
    const SEEN = Date.parse(READY_AT) + 30_000;

    /** Runs a raw agent pod through the reflector's transform at `at` and stores the facts. */
    const see = (agents: CniAgents, pod: unknown, at: number) => {
      const facts = agents.toFacts(pod, at);
      if (facts) agents.store.upsert(facts);
      return facts;
    };

    it("counts from when this controller first saw it Ready when the kubelet's time is older (a lagging clock)", () => {
      const agents = new CniAgents();
      see(agents, agentPodJson(), SEEN);
      expect(readyForMs(agents, "node-a", inStep(SEEN + 5_000))).to.equal(5_000);
      // The kubelet's own time is what explains breakage: it claims 35 s.
      expect(readyForMs(agents, "node-a", inStep(SEEN + 5_000), "claimed")).to.equal(35_000);
    });

    it("keeps the first sight across updates and relists of the same Ready spell, restarts it on a new one", () => {
      const agents = new CniAgents();
      see(agents, agentPodJson(), SEEN);
      see(agents, agentPodJson(), SEEN + 20_000);
      expect(readyForMs(agents, "node-a", inStep(SEEN + 25_000))).to.equal(25_000);
      const again = agentPodJson();
      readyCondition(again).lastTransitionTime = new Date(SEEN + 21_000).toISOString();
      see(agents, again, SEEN + 22_000);
      expect(readyForMs(agents, "node-a", inStep(SEEN + 25_000))).to.equal(3_000);
    });

    it("counts Ready without a time only from our own sight, and not at all without it", () => {
      const agents = new CniAgents();
      const pod = agentPodJson();
      delete readyCondition(pod).lastTransitionTime;
      see(agents, pod, SEEN);
      expect(readyForMs(agents, "node-a", inStep(SEEN + 4_000))).to.equal(4_000);
      const unseen = new CniAgents();
      unseen.store.upsert({ ...agent("x", "node-a", Number.POSITIVE_INFINITY) });
      expect(readyForMs(unseen, "node-a", inStep(SEEN))).to.equal(undefined);
    });

    it("counts a Ready time in the future (a fast kubelet clock) as Ready for 0 until that time has passed", () => {
      const agents = new CniAgents();
      const pod = agentPodJson();
      readyCondition(pod).lastTransitionTime = new Date(SEEN + 60_000).toISOString();
      see(agents, pod, SEEN);
      expect(readyForMs(agents, "node-a", inStep(SEEN + 30_000))).to.equal(0);
      expect(readyForMs(agents, "node-a", inStep(SEEN + 70_000))).to.equal(10_000);
    });
  });
});
