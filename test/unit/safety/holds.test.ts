// Holds: the registry of held pods, the pods_held gauge and holds_total counter, and filtering keys by reason and place.

import { expect } from "chai";
import { Registry } from "prom-client";
import type { PodFacts } from "../../../src/detect/facts.js";
import { createMetrics } from "../../../src/observe/metrics.js";
import { HOLD_REASONS, type HoldReason } from "../../../src/safety/hold-reasons.js";
import { Holds } from "../../../src/safety/holds.js";
import { namedPod as pod } from "../../support/pod-builders.js";
import { FakeClock } from "../fake-clock.js";

function setup() {
  const registry = new Registry();
  const metrics = createMetrics(registry, { ruleNames: ["istio"], version: "test" });
  const clock = new FakeClock(5_000);
  const holds = new Holds(metrics.podsHeld, metrics.holdsTotal, {
    longest: metrics.podsHeldLongestSeconds,
    monotonicMs: () => clock.monotonic(),
  });
  /** The value of each metric's series for the reason. */
  const read = async (reason: HoldReason) => {
    const value = async (name: string) => {
      const metric = await registry.getSingleMetric(name)?.get();
      return metric?.values.find((v) => v.labels.reason === reason)?.value;
    };
    return { held: await value("cni_repair_pods_held"), total: await value("cni_repair_holds_total") };
  };
  /** cni_repair_pods_held_longest_seconds for the reason, as a scrape reads it. */
  const longest = async (reason: HoldReason) => {
    const metric = await registry.getSingleMetric("cni_repair_pods_held_longest_seconds")?.get();
    return metric?.values.find((v) => v.labels.reason === reason)?.value;
  };
  return { holds, read, longest, clock };
}

const keyOf = (facts: PodFacts) => `${facts.namespace}/${facts.name}`;
/** The reason a key is held for, read through the public keys() query. */
const reasonOf = (holds: Holds, key: string) => HOLD_REASONS.find((reason) => holds.keys([reason]).includes(key));

describe("safety/holds", () => {
  it("starts with every reason at zero", async () => {
    const { holds, read } = setup();
    expect(holds.keys(HOLD_REASONS).length).to.equal(0);
    for (const reason of HOLD_REASONS) expect(await read(reason)).to.deep.equal({ held: 0, total: 0 });
  });

  it("counts a new hold once, however often it is repeated", async () => {
    const { holds, read } = setup();
    const a = pod("a");
    expect(holds.hold(keyOf(a), a, "storm")).to.equal(true);
    expect(holds.hold(keyOf(a), a, "storm")).to.equal(false);
    expect(holds.hold(keyOf(a), a, "storm")).to.equal(false);
    expect(await read("storm")).to.deep.equal({ held: 1, total: 1 });
    expect(reasonOf(holds, keyOf(a))).to.equal("storm");
    expect(holds.keys(HOLD_REASONS).length).to.equal(1);
  });

  it("moves a pod to its new reason: the gauge follows, the counter adds", async () => {
    const { holds, read } = setup();
    const a = pod("a");
    holds.hold(keyOf(a), a, "rate_limit");
    expect(holds.hold(keyOf(a), a, "cni_agent_not_ready")).to.equal(true);
    expect(await read("rate_limit")).to.deep.equal({ held: 0, total: 1 });
    expect(await read("cni_agent_not_ready")).to.deep.equal({ held: 1, total: 1 });
    expect(holds.hold(keyOf(a), a, "rate_limit")).to.equal(true);
    expect(await read("rate_limit")).to.deep.equal({ held: 1, total: 2 });
    expect(await read("cni_agent_not_ready")).to.deep.equal({ held: 0, total: 1 });
    expect(holds.keys(HOLD_REASONS).length).to.equal(1);
  });

  it("counts a new pod UID under the same key as a new hold", async () => {
    const { holds, read } = setup();
    const first = pod("a");
    const replacement = pod("a", { uid: "uid-a-2" });
    holds.hold(keyOf(first), first, "loop_backoff");
    expect(holds.hold(keyOf(replacement), replacement, "loop_backoff")).to.equal(true);
    expect(await read("loop_backoff")).to.deep.equal({ held: 1, total: 2 });
  });

  it("releases a held pod once, returning what it was held for", async () => {
    const { holds, read } = setup();
    const a = pod("a");
    holds.hold(keyOf(a), a, "bare_pod");
    expect(holds.release(keyOf(a))).to.equal("bare_pod");
    expect(holds.release(keyOf(a))).to.equal(undefined);
    expect(holds.release("shop/never-held")).to.equal(undefined);
    expect(reasonOf(holds, keyOf(a))).to.equal(undefined);
    expect(holds.keys(HOLD_REASONS).length).to.equal(0);
    expect(await read("bare_pod")).to.deep.equal({ held: 0, total: 1 });
    // Held again later: a new hold.
    expect(holds.hold(keyOf(a), a, "bare_pod")).to.equal(true);
    expect(await read("bare_pod")).to.deep.equal({ held: 1, total: 2 });
  });

  it("keeps the gauge equal to the pods held, per reason", async () => {
    const { holds, read } = setup();
    const reasons: HoldReason[] = ["storm", "storm", "terminal", "node_inflight", "storm"];
    reasons.forEach((reason, i) => {
      const p = pod(`p${i}`);
      holds.hold(keyOf(p), p, reason);
    });
    holds.release("shop/p1");
    expect(await read("storm")).to.deep.equal({ held: 2, total: 3 });
    expect(await read("terminal")).to.deep.equal({ held: 1, total: 1 });
    expect(await read("node_inflight")).to.deep.equal({ held: 1, total: 1 });
    expect(holds.keys(HOLD_REASONS).length).to.equal(4);
  });

  it("lists keys by reason, node and namespace", () => {
    const { holds } = setup();
    const pods: [PodFacts, HoldReason][] = [
      [pod("a1", { nodeName: "node-a", namespace: "shop" }), "cni_agent_not_ready"],
      [pod("a2", { nodeName: "node-a", namespace: "billing" }), "cni_agent_not_ready"],
      [pod("a3", { nodeName: "node-a", namespace: "shop" }), "node_inflight"],
      [pod("b1", { nodeName: "node-b", namespace: "shop" }), "cni_agent_not_ready"],
      [pod("b2", { nodeName: "node-b", namespace: "shop" }), "namespace_inflight"],
      [pod("x1", { nodeName: undefined, namespace: "shop" }), "storm"],
    ];
    for (const [facts, reason] of pods) holds.hold(keyOf(facts), facts, reason);

    expect(holds.keys(["cni_agent_not_ready"])).to.have.members(["shop/a1", "billing/a2", "shop/b1"]);
    expect(holds.keys(["cni_agent_not_ready"], { node: "node-a" })).to.have.members(["shop/a1", "billing/a2"]);
    expect(holds.keys(["node_inflight", "namespace_inflight"], { namespace: "shop" })).to.have.members([
      "shop/a3",
      "shop/b2",
    ]);
    expect(holds.keys(["cni_agent_not_ready", "node_inflight"], { node: "node-a", namespace: "shop" })).to.have.members(
      ["shop/a1", "shop/a3"],
    );
    expect(holds.keys(["storm"], { node: "" })).to.deep.equal(["shop/x1"]);
    expect(holds.keys(["storm"], { node: "node-a" })).to.deep.equal([]);
    expect(holds.keys([])).to.deep.equal([]);
    expect(holds.keys([...HOLD_REASONS])).to.have.length(pods.length);
  });

  it("lists a pod under its latest reason only, and not once released", () => {
    const { holds } = setup();
    const a = pod("a", { nodeName: "node-a" });
    holds.hold(keyOf(a), a, "cni_agent_not_ready");
    holds.hold(keyOf(a), a, "storm");
    expect(holds.keys(["cni_agent_not_ready"])).to.deep.equal([]);
    expect(holds.keys(["storm"], { node: "node-a" })).to.deep.equal(["shop/a"]);
    holds.release(keyOf(a));
    expect(holds.keys(["storm"])).to.deep.equal([]);
  });

  it("reports at scrape time how long the longest-held pod has been held for each reason", async () => {
    const { holds, longest, clock } = setup();
    for (const reason of HOLD_REASONS) expect(await longest(reason), reason).to.equal(0);
    const a = pod("a");
    const b = pod("b");
    holds.hold(keyOf(a), a, "mesh_repair_active");
    clock.advance(60_000);
    holds.hold(keyOf(b), b, "mesh_repair_active");
    clock.advance(30_000);
    // Held again for the same reason: still the first hold's age.
    holds.hold(keyOf(a), a, "mesh_repair_active");
    expect(await longest("mesh_repair_active")).to.equal(90);
    expect(await longest("mesh_repair_pending")).to.equal(0);
    // A new reason starts its own age; the oldest left of the old reason is b.
    holds.hold(keyOf(a), a, "mesh_repair_pending");
    clock.advance(10_000);
    expect(await longest("mesh_repair_pending")).to.equal(10);
    expect(await longest("mesh_repair_active")).to.equal(40);
    holds.release(keyOf(b));
    expect(await longest("mesh_repair_active")).to.equal(0);
  });
});
