// The triggers (controller/triggers.ts): which change puts which pod keys on the queue, and when. Each source is
// a Publisher the test publishes into; the requests are what the queue would be asked to do.
import { expect } from "chai";
import { Registry } from "prom-client";
import { BrokenPods } from "../../../src/controller/broken-pods.js";
import type { Request } from "../../../src/controller/controller.js";
import { podTriggers } from "../../../src/controller/triggers.js";
import { detect } from "../../../src/detect/detect.js";
import type { PodFacts } from "../../../src/detect/facts.js";
import { presetRule } from "../../../src/detect/presets.js";
import type { Rule } from "../../../src/detect/rule.js";
import type { AgentFacts } from "../../../src/informer/cni-agent-pods.js";
import type { StoreChange } from "../../../src/informer/facts-store.js";
import type { NamespaceFacts } from "../../../src/informer/namespace-facts.js";
import type { PodEvent } from "../../../src/informer/pod-cache.js";
import { PodStore } from "../../../src/informer/pod-store.js";
import { createMetrics } from "../../../src/observe/metrics.js";
import type { GuardEvent } from "../../../src/safety/guard-events.js";
import { Holds } from "../../../src/safety/holds.js";
import { Publisher } from "../../../src/util/publisher.js";
import { exited, init, istioPod, podFacts } from "../../support/pod-builders.js";

const istio = presetRule("istio") as Rule;
const broken = (name: string, overrides: Partial<PodFacts> = {}) =>
  istioPod([init("istio-validation", "waiting", exited(126))], { name, uid: `uid-${name}`, ...overrides });
const healthy = (name: string, overrides: Partial<PodFacts> = {}) =>
  istioPod([init("istio-validation", exited(0))], { name, uid: `uid-${name}`, ...overrides });
/** A pod cache change with the verdict the cache detected on it. */
const change = (current: PodFacts | undefined, previous?: PodFacts): PodEvent => {
  const facts = (current ?? previous) as PodFacts;
  return {
    change: { key: `${facts.namespace}/${facts.name}`, previous, current },
    verdict: current && detect(current, [istio]),
  };
};

function setup() {
  const metrics = createMetrics(new Registry(), { ruleNames: ["istio"], version: "test" });
  const sources = {
    pods: new Publisher<PodEvent>(),
    agents: [new Publisher<StoreChange<AgentFacts>>()],
    namespaces: new Publisher<StoreChange<NamespaceFacts>>(),
    guards: new Publisher<GuardEvent>(),
    istioRepair: new Publisher<unknown>(),
    resync: new Publisher<void>(),
  };
  const podStore = new PodStore();
  const brokenPods = new BrokenPods(metrics.brokenPods, metrics.detections);
  const holds = new Holds(metrics.podsHeld, metrics.holdsTotal);
  const requests: Request[] = [];
  const triggers = podTriggers(sources, {
    podStore,
    broken: brokenPods,
    holds,
  });
  for (const trigger of triggers) trigger.connect((request) => requests.push(request));
  /** The requests the action makes, and no more (the list starts empty each time). */
  const requestsOf = (action: () => void): Request[] => {
    requests.length = 0;
    action();
    return [...requests];
  };
  return { sources, podStore, brokenPods, holds, triggers, requestsOf };
}

describe("controller/triggers", () => {
  it("names every trigger, one per source (an agent trigger per agent watch)", () => {
    expect(setup().triggers.map((trigger) => trigger.name)).to.deep.equal([
      "pod changed → that pod",
      "node agent changed → pods held for an agent on its node",
      "namespace changed → every pod in it",
      "guards changed → pods they held",
      "Istio's repair settings changed → pods held for it",
      "resync → every pod known broken",
    ]);
  });

  it("a pod change enqueues the pod only when it is broken now or was known broken", () => {
    const { sources, brokenPods, requestsOf } = setup();
    expect(requestsOf(() => sources.pods.publish(change(broken("a"))))).to.deep.equal([{ key: "shop/a" }]);
    expect(
      requestsOf(() => sources.pods.publish(change(healthy("b")))),
      "a healthy pod never seen broken",
    ).to.deep.equal([]);
    expect(requestsOf(() => sources.pods.publish(change(podFacts({ name: "plain" }))))).to.deep.equal([]);
    // Known broken and healthy now (or gone): looked at again, so its state is cleared.
    brokenPods.markBroken("shop/c", "uid-c", "istio", 0);
    expect(requestsOf(() => sources.pods.publish(change(healthy("c"))))).to.deep.equal([{ key: "shop/c" }]);
    expect(requestsOf(() => sources.pods.publish(change(undefined, broken("c"))))).to.deep.equal([{ key: "shop/c" }]);
  });

  it("an agent change enqueues only the pods held for an agent on that node", () => {
    const { sources, holds, requestsOf } = setup();
    holds.hold("shop/on-a", broken("on-a", { nodeName: "node-a" }), "cni_agent_not_ready");
    holds.hold("shop/on-b", broken("on-b", { nodeName: "node-b" }), "cni_agent_not_ready");
    holds.hold("shop/paced", broken("paced", { nodeName: "node-a" }), "rate_limit");
    const agent: AgentFacts = {
      namespace: "istio-system",
      name: "istio-cni-a",
      nodeName: "node-a",
      readySinceMs: 1,
      seenReadyAtMs: 1,
    };
    const agentChange = { key: "istio-system/istio-cni-a", previous: undefined, current: agent };
    expect(requestsOf(() => sources.agents[0]?.publish(agentChange))).to.deep.equal([{ key: "shop/on-a" }]);
    // A deleted agent pod: the node comes from the previous facts.
    const gone = { key: agentChange.key, previous: agent, current: undefined };
    expect(requestsOf(() => sources.agents[0]?.publish(gone))).to.deep.equal([{ key: "shop/on-a" }]);
  });

  it("a namespace change enqueues every cached pod in that namespace", () => {
    const { sources, podStore, requestsOf } = setup();
    podStore.upsert(healthy("a"));
    podStore.upsert(healthy("b"));
    podStore.upsert(healthy("c", { namespace: "other" }));
    const labelled = { name: "shop", labels: { "istio.io/dataplane-mode": "ambient" } };
    const requests = requestsOf(() =>
      sources.namespaces.publish({ key: "shop", previous: undefined, current: labelled }),
    );
    expect(requests.map((request) => request.key).sort()).to.deep.equal(["shop/a", "shop/b"]);
  });

  it("guard events: a freed slot wakes the pods held for it, as many as fit, longest held first; a moved turn that pod, after its wait", () => {
    const { sources, holds, requestsOf } = setup();
    holds.hold("shop/node-held", broken("node-held", { nodeName: "node-a" }), "node_inflight");
    holds.hold("shop/node-later", broken("node-later", { nodeName: "node-a" }), "node_inflight");
    holds.hold("shop/ns-later", broken("ns-later", { nodeName: "node-y" }), "namespace_inflight");
    holds.hold("shop/ns-held", broken("ns-held", { nodeName: "node-z" }), "namespace_inflight");
    holds.hold("other/ns-held", broken("ns-held", { namespace: "other", nodeName: "node-z" }), "namespace_inflight");
    holds.hold("shop/elsewhere", broken("elsewhere", { nodeName: "node-b" }), "node_inflight");
    const slotFreed = (free: { node: number; namespace: number }) =>
      requestsOf(() => sources.guards.publish({ kind: "slot_freed", node: "node-a", namespace: "shop", free }));
    expect(slotFreed({ node: 1, namespace: 1 })).to.deep.equal([{ key: "shop/node-held" }, { key: "shop/ns-later" }]);
    expect(slotFreed({ node: 2, namespace: 0 })).to.deep.equal([{ key: "shop/node-held" }, { key: "shop/node-later" }]);
    const moved = requestsOf(() => sources.guards.publish({ kind: "turn_moved", key: "shop/x", waitMs: 1_500 }));
    expect(moved).to.deep.equal([{ key: "shop/x", afterMs: 1_500 }]);
  });

  it("a storm opening re-judges the pods waiting for a later guard on its node; closing, the pods it held", () => {
    const { sources, holds, requestsOf } = setup();
    holds.hold("shop/paced", broken("paced", { nodeName: "node-a" }), "rate_limit");
    holds.hold("shop/slot", broken("slot", { nodeName: "node-a" }), "node_inflight");
    holds.hold("shop/agent", broken("agent", { nodeName: "node-a" }), "cni_agent_not_ready");
    holds.hold("shop/other-node", broken("other-node", { nodeName: "node-b" }), "rate_limit");
    holds.hold("shop/stormed", broken("stormed", { nodeName: "node-a" }), "storm");
    const opened = requestsOf(() =>
      sources.guards.publish({ kind: "storm", transition: { scope: "node", node: "node-a", open: true } }),
    );
    expect(opened.map((request) => request.key).sort()).to.deep.equal(["shop/paced", "shop/slot"]);
    const closed = requestsOf(() =>
      sources.guards.publish({ kind: "storm", transition: { scope: "node", node: "node-a", open: false } }),
    );
    expect(closed).to.deep.equal([{ key: "shop/stormed" }]);
    // Cluster-wide: every node.
    const clusterOpened = requestsOf(() =>
      sources.guards.publish({ kind: "storm", transition: { scope: "cluster", node: "", open: true } }),
    );
    expect(clusterOpened.map((request) => request.key).sort()).to.deep.equal([
      "shop/other-node",
      "shop/paced",
      "shop/slot",
    ]);
  });

  it("the resync tick enqueues every pod known broken, and only those", () => {
    const { sources, brokenPods, requestsOf } = setup();
    brokenPods.markBroken("shop/a", "uid-a", "istio", 0);
    brokenPods.markBroken("other/b", "uid-b", "istio", 0);
    const requests = requestsOf(() => sources.resync.publish());
    expect(requests.map((request) => request.key).sort()).to.deep.equal(["other/b", "shop/a"]);
  });

  it("a change of Istio's repair settings re-judges the pods held for Istio's repair, and only those", () => {
    const { sources, holds, requestsOf } = setup();
    holds.hold("shop/pending", broken("pending", { nodeName: "node-a" }), "mesh_repair_pending");
    holds.hold("shop/active", broken("active", { nodeName: "node-b" }), "mesh_repair_active");
    holds.hold("shop/paced", broken("paced", { nodeName: "node-a" }), "rate_limit");
    const requests = requestsOf(() => sources.istioRepair.publish({ kind: "absent" }));
    expect(requests.map((request) => request.key).sort()).to.deep.equal(["shop/active", "shop/pending"]);
    expect(requests.every((request) => request.afterMs === undefined)).to.equal(true);
  });
});
