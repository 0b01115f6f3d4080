// StormBreaker: per-node and cluster counts of meshed/broken pods, and the open/close transitions at the thresholds.

import { expect } from "chai";
import fc from "fast-check";
import type { PodFacts } from "../../../src/detect/facts.js";
import { type PodStanding, StormBreaker, type StormTransition } from "../../../src/safety/storm-breaker.js";
import { podFacts } from "../../support/pod-builders.js";
import { FakeClock } from "../fake-clock.js";

const HEALTHY: PodStanding = { meshed: true, broken: false };
const BROKEN: PodStanding = { meshed: true, broken: true };
const UNMESHED: PodStanding = { meshed: false, broken: false };
const EXPLAINED: PodStanding = { meshed: true, broken: true, explained: true };
const OWNER = { kind: "ReplicaSet", name: "web-5d8c", uid: "rs-1" };
const WINDOW = 60_000;
const START = Date.parse("2025-03-04T10:20:00Z");

const nodeOpen = (node: string, open: boolean): StormTransition => ({ scope: "node", node, open });
const clusterOpen = (open: boolean): StormTransition => ({ scope: "cluster", node: "", open });

/** A breaker plus the pods it has been told about, so tests can move a pod by name. */
class Fleet {
  readonly breaker: StormBreaker;
  readonly #pods = new Map<string, { facts: PodFacts; standing: PodStanding }>();

  readonly clock = new FakeClock(START);

  constructor(maxBrokenFraction = 0.5, minBroken = 3) {
    this.breaker = new StormBreaker({ maxBrokenFraction, minBroken, windowMs: WINDOW, clock: this.clock });
  }

  /** Adds, changes or (standing undefined) removes the named pod; returns the transitions. */
  set(
    name: string,
    node: string | undefined,
    standing: PodStanding | undefined,
    uid = `uid-${name}`,
  ): StormTransition[] {
    const previous = this.#pods.get(name);
    // A pod's creation time is fixed for its UID: a new UID is created now.
    const createdAtMs = previous?.facts.uid === uid ? previous.facts.createdAtMs : this.clock.now();
    const current = standing && { facts: podFacts({ name, uid, nodeName: node, owner: OWNER, createdAtMs }), standing };
    if (current) this.#pods.set(name, current);
    else this.#pods.delete(name);
    return this.breaker.update(previous, current);
  }

  /** We delete the named pod: the DELETE is sent, succeeds, and the watch then shows it going away. */
  deleteByUs(name: string, happened = true): StormTransition[] {
    const pod = this.#pods.get(name);
    if (!pod) throw new Error(`no pod ${name}`);
    const transitions = [...this.breaker.deleting(pod.facts), ...this.breaker.deleted(pod.facts.uid, happened)];
    if (happened) transitions.push(...this.set(name, pod.facts.nodeName, undefined));
    return transitions;
  }

  /** Adds `count` pods named prefix-i on the node; returns all transitions. */
  add(prefix: string, node: string, count: number, standing: PodStanding): StormTransition[] {
    const transitions: StormTransition[] = [];
    for (let i = 0; i < count; i++) transitions.push(...this.set(`${prefix}-${i}`, node, standing));
    return transitions;
  }

  openFor(node: string | undefined) {
    return this.breaker.openFor(podFacts({ nodeName: node }));
  }
}

describe("safety/storm-breaker", () => {
  it("opens on a node once broken pods reach the minimum and exceed the fraction, and closes as they heal", () => {
    const fleet = new Fleet(0.5, 3);
    fleet.add("calm", "node-b", 20, HEALTHY); // keeps the cluster below its threshold
    expect(fleet.add("a", "node-a", 4, HEALTHY)).to.deep.equal([]);
    expect(fleet.set("a-0", "node-a", BROKEN)).to.deep.equal([]);
    expect(fleet.set("a-1", "node-a", BROKEN)).to.deep.equal([]); // 2 of 4: below the minimum of 3
    expect(fleet.set("a-2", "node-a", BROKEN)).to.deep.equal([nodeOpen("node-a", true)]); // 3 of 4 > 50%
    expect(fleet.openFor("node-a")).to.equal("node");
    expect(fleet.openFor("node-b")).to.equal(undefined);
    expect(fleet.set("a-3", "node-a", BROKEN)).to.deep.equal([]); // stays open
    expect(fleet.set("a-3", "node-a", HEALTHY)).to.deep.equal([]);
    expect(fleet.set("a-2", "node-a", HEALTHY)).to.deep.equal([nodeOpen("node-a", false)]);
    expect(fleet.openFor("node-a")).to.equal(undefined);
  });

  it("stays shut at exactly the fraction: the share must be more than it", () => {
    const fleet = new Fleet(0.5, 3);
    fleet.add("calm", "node-b", 20, HEALTHY);
    fleet.add("a", "node-a", 6, HEALTHY);
    for (const i of [0, 1, 2]) expect(fleet.set(`a-${i}`, "node-a", BROKEN)).to.deep.equal([]); // 3 of 6 = 50%
    expect(fleet.set("a-3", "node-a", BROKEN)).to.deep.equal([nodeOpen("node-a", true)]); // 4 of 6
    // More healthy pods dilute it: 4 of 7 is still more than half, 4 of 8 is exactly half and shuts it.
    expect(fleet.set("new-1", "node-a", HEALTHY)).to.deep.equal([]);
    expect(fleet.set("new-2", "node-a", HEALTHY)).to.deep.equal([nodeOpen("node-a", false)]);
  });

  it("needs the minimum count even when every meshed pod is broken", () => {
    const fleet = new Fleet(0.5, 3);
    fleet.add("calm", "node-b", 20, HEALTHY);
    expect(fleet.add("a", "node-a", 2, BROKEN)).to.deep.equal([]);
    expect(fleet.openFor("node-a")).to.equal(undefined);
    expect(fleet.set("a-2", "node-a", BROKEN)).to.deep.equal([nodeOpen("node-a", true)]);
  });

  it("opens the cluster breaker from many nodes none of which is open alone", () => {
    const fleet = new Fleet(0.5, 3);
    for (const node of ["n1", "n2", "n3"]) {
      fleet.add(`${node}-ok`, node, 2, HEALTHY);
      expect(fleet.set(`${node}-bad-0`, node, BROKEN)).to.deep.equal([]);
    }
    // 3 broken of 9: the minimum but not more than half.
    expect(fleet.set("n1-ok-0", "n1", BROKEN)).to.deep.equal([]); // 4 of 9
    expect(fleet.set("n2-ok-0", "n2", BROKEN)).to.deep.equal([clusterOpen(true)]); // 5 of 9
    expect(fleet.openFor("n3")).to.equal("cluster");
    expect(fleet.openFor("elsewhere")).to.equal("cluster");
    expect(fleet.set("n1-ok-0", "n1", HEALTHY)).to.deep.equal([clusterOpen(false)]);
    expect(fleet.openFor("n3")).to.equal(undefined);
  });

  it("reports node and cluster opening together, and names the node breaker first for its pods", () => {
    const fleet = new Fleet(0.5, 3);
    fleet.add("ok", "node-b", 2, HEALTHY);
    expect(fleet.add("bad", "node-a", 3, BROKEN)).to.deep.equal([nodeOpen("node-a", true), clusterOpen(true)]);
    expect(fleet.openFor("node-a")).to.equal("node");
    expect(fleet.openFor("node-b")).to.equal("cluster");
    expect(fleet.set("bad-0", "node-a", undefined)).to.deep.equal([nodeOpen("node-a", false), clusterOpen(false)]);
  });

  it("ignores pods that are not meshed, broken or not", () => {
    const fleet = new Fleet(0.5, 1);
    expect(fleet.add("plain", "node-a", 5, UNMESHED)).to.deep.equal([]);
    expect(fleet.add("odd", "node-a", 5, { meshed: false, broken: true })).to.deep.equal([]);
    expect(fleet.openFor("node-a")).to.equal(undefined);
    expect(fleet.breaker.describe("node", "node-a")).to.match(/^0 of 0 meshed pods broken/);
  });

  it("moves a pod between standings: broken, unmeshed, removed", () => {
    const fleet = new Fleet(0.5, 2);
    fleet.add("calm", "node-b", 20, HEALTHY);
    fleet.add("a", "node-a", 3, BROKEN);
    expect(fleet.openFor("node-a")).to.equal("node");
    expect(fleet.breaker.describe("node", "node-a")).to.match(/^3 of 3 /);
    // The marker went away: the pod no longer counts at all.
    expect(fleet.set("a-0", "node-a", UNMESHED)).to.deep.equal([]);
    expect(fleet.breaker.describe("node", "node-a")).to.match(/^2 of 2 /);
    expect(fleet.set("a-1", "node-a", undefined)).to.deep.equal([nodeOpen("node-a", false)]);
    expect(fleet.breaker.describe("node", "node-a")).to.match(/^1 of 1 /);
    expect(fleet.set("a-0", "node-a", BROKEN)).to.deep.equal([nodeOpen("node-a", true)]);
  });

  it("moves a pod from one node to another in one update", () => {
    const fleet = new Fleet(0.5, 2);
    fleet.add("calm", "node-c", 20, HEALTHY);
    fleet.add("a", "node-a", 2, BROKEN);
    fleet.add("b", "node-b", 1, BROKEN);
    expect(fleet.set("a-0", "node-b", BROKEN)).to.deep.equal([nodeOpen("node-a", false), nodeOpen("node-b", true)]);
  });

  it("counts pods without a node under the empty node name", () => {
    const fleet = new Fleet(0.5, 1);
    fleet.add("calm", "node-b", 20, HEALTHY);
    expect(fleet.set("lost", undefined, BROKEN)).to.deep.equal([nodeOpen("", true)]);
    expect(fleet.openFor(undefined)).to.equal("node");
  });

  it("describes the counts and the threshold", () => {
    const fleet = new Fleet(0.5, 3);
    fleet.add("ok", "node-a", 1, HEALTHY);
    fleet.add("bad", "node-a", 3, BROKEN);
    fleet.add("calm", "node-b", 2, HEALTHY);
    expect(fleet.breaker.describe("node", "node-a")).to.equal(
      "3 of 4 meshed pods broken on node node-a (more than 50%)",
    );
    expect(fleet.breaker.describe("cluster", "node-a")).to.equal(
      "3 of 6 meshed pods broken in the cluster (more than 50%)",
    );
    expect(fleet.breaker.describe("node", "unknown")).to.equal(
      "0 of 0 meshed pods broken on node unknown (more than 50%)",
    );
  });

  // Floating point would print 0.55 as 55.00000000000001%.
  it("describes a fraction like 0.55 as a clean percentage", () => {
    const fleet = new Fleet(0.55, 1);
    fleet.add("bad", "node-a", 1, BROKEN);
    expect(fleet.breaker.describe("node", "node-a")).to.equal(
      "1 of 1 meshed pods broken on node node-a (more than 55%)",
    );
  });

  it("property: the state and the transitions match a recount from scratch after every update", () => {
    const nodes = ["n1", "n2", "n3"];
    const standingArb = fc.option(fc.record({ meshed: fc.boolean(), broken: fc.boolean() }), { nil: undefined });
    const opArb = fc.record({ pod: fc.nat(11), node: fc.constantFrom(...nodes), standing: standingArb });
    const configArb = fc.record({
      maxBrokenFraction: fc.constantFrom(0, 0.25, 0.5, 0.75, 1),
      minBroken: fc.integer({ min: 1, max: 4 }),
    });
    /** How often each branch the property exists for was reached (classified after every update), over all runs. */
    const reached = new Map<string, number>();
    const reach = (branch: string) => reached.set(branch, (reached.get(branch) ?? 0) + 1);
    fc.assert(
      fc.property(configArb, fc.array(opArb, { maxLength: 60 }), (config, ops) => {
        const fleet = new Fleet(config.maxBrokenFraction, config.minBroken);
        const model = new Map<string, { node: string; standing: PodStanding }>();
        const countsOf = (pods: { standing: PodStanding }[]) => {
          const meshed = pods.filter((p) => p.standing.meshed);
          return { meshed: meshed.length, broken: meshed.filter((p) => p.standing.broken).length };
        };
        const isOpen = (pods: { standing: PodStanding }[]) => {
          const { meshed, broken } = countsOf(pods);
          return broken >= config.minBroken && broken > config.maxBrokenFraction * meshed;
        };
        const state = () => ({
          nodes: nodes.map((n) => isOpen([...model.values()].filter((p) => p.node === n))),
          cluster: isOpen([...model.values()]),
        });
        for (const op of ops) {
          const before = state();
          const name = `p${op.pod}`;
          const previous = model.get(name);
          const transitions = fleet.set(name, op.node, op.standing);
          if (op.standing) model.set(name, { node: op.node, standing: op.standing });
          else model.delete(name);
          const after = state();
          const expected: StormTransition[] = [];
          nodes.forEach((node, i) => {
            if (before.nodes[i] !== after.nodes[i]) expected.push(nodeOpen(node, after.nodes[i] as boolean));
          });
          if (before.cluster !== after.cluster) expected.push(clusterOpen(after.cluster));
          const sortKey = (t: StormTransition) => `${t.scope}/${t.node}`;
          expect([...transitions].sort((a, b) => sortKey(a).localeCompare(sortKey(b)))).to.deep.equal(
            expected.sort((a, b) => sortKey(a).localeCompare(sortKey(b))),
          );
          nodes.forEach((node, i) => {
            expect(fleet.openFor(node)).to.equal(after.nodes[i] ? "node" : after.cluster ? "cluster" : undefined);
            const onNode = [...model.values()].filter((p) => p.node === node && p.standing.meshed);
            const broken = onNode.filter((p) => p.standing.broken).length;
            expect(fleet.breaker.describe("node", node)).to.match(new RegExp(`^${broken} of ${onNode.length} `));
          });
          // What this update exercised.
          if (previous === undefined) reach(op.standing ? "a pod added" : "a pod unknown removed");
          else if (op.standing === undefined) reach("a pod removed");
          else if (previous.node !== op.node) reach("a pod moved between nodes");
          else if (previous.standing.meshed && !op.standing.meshed) reach("a pod no longer meshed, in place");
          else if (previous.standing.broken !== op.standing.broken) reach("a pod broke or healed in place");
          for (const transition of expected) {
            reach(`${transition.scope} breaker ${transition.open ? "opened" : "closed"}`);
          }
          if (
            expected.some((t) => t.scope === "node" && t.open) &&
            expected.some((t) => t.scope === "cluster" && t.open)
          ) {
            reach("node and cluster opened in one update");
          }
          if (after.cluster && after.nodes.some((open) => !open)) reach("cluster open over a node not open itself");
          for (const node of nodes) {
            const { meshed, broken } = countsOf([...model.values()].filter((p) => p.node === node));
            const overShare = broken > config.maxBrokenFraction * meshed;
            if (broken > 0 && overShare && broken < config.minBroken)
              reach("held shut: over the share, under the minimum");
            if (broken >= config.minBroken && broken === config.maxBrokenFraction * meshed) {
              reach("held shut: the minimum reached, exactly at the share");
            }
          }
        }
      }),
      // A fixed seed: which branches the runs reach must not change from one run to the next.
      { seed: 20261205 },
    );
    const branches = [
      "a pod added",
      "a pod removed",
      "a pod moved between nodes",
      "a pod no longer meshed, in place",
      "a pod broke or healed in place",
      "node breaker opened",
      "node breaker closed",
      "cluster breaker opened",
      "cluster breaker closed",
      "node and cluster opened in one update",
      "cluster open over a node not open itself",
      "held shut: over the share, under the minimum",
      "held shut: the minimum reached, exactly at the share",
    ];
    const missed = branches.filter((branch) => !reached.has(branch));
    expect(missed, `branches never reached (reached: ${JSON.stringify(Object.fromEntries(reached))})`).to.deep.equal(
      [],
    );
  });

  describe("our own deletes, the window, and explained breakage", () => {
    it("a pod we deleted keeps counting as broken: our deletes never close the breaker", () => {
      const fleet = new Fleet(0.5, 3);
      fleet.add("calm", "node-b", 40, HEALTHY);
      fleet.add("a", "node-a", 20, HEALTHY);
      // Ten break and are deleted one by one: the share only grows.
      for (let i = 0; i < 10; i++) {
        expect(fleet.set(`a-${i}`, "node-a", BROKEN)).to.deep.equal([]);
        expect(fleet.deleteByUs(`a-${i}`)).to.deep.equal([]);
      }
      expect(fleet.breaker.describe("node", "node-a")).to.equal(
        "10 of 20 meshed pods broken on node node-a (more than 50%; 10 of them deleted by us, still counted)",
      );
      expect(fleet.set("a-10", "node-a", BROKEN)).to.deep.equal([nodeOpen("node-a", true)]);
      expect(fleet.set("a-11", "node-a", BROKEN)).to.deep.equal([]);
      expect(fleet.openFor("node-a")).to.equal("node");
    });

    it("a replacement takes its predecessor's slot: healthy, the slot still counts as broken until the window passes", () => {
      const fleet = new Fleet(0.5, 3);
      fleet.add("calm", "node-b", 40, HEALTHY);
      fleet.add("a", "node-a", 6, HEALTHY);
      for (const i of [0, 1, 2]) fleet.set(`a-${i}`, "node-a", BROKEN);
      fleet.set("a-3", "node-a", BROKEN); // 4 of 6: open
      for (const i of [0, 1, 2]) fleet.deleteByUs(`a-${i}`);
      fleet.clock.advance(1_000);
      // Healthy replacements (same owner, created after the delete) do not add slots of their own.
      for (const i of [0, 1, 2]) fleet.set(`a-${i}-new`, "node-a", HEALTHY);
      expect(fleet.breaker.describe("node", "node-a")).to.match(/^4 of 6 /);
      expect(fleet.breaker.expire()).to.deep.equal([]);
      fleet.clock.advance(WINDOW);
      // The window has passed: the three slots are healthy replacements now, 1 of 6 broken.
      expect(fleet.breaker.expire()).to.deep.equal([nodeOpen("node-a", false)]);
      expect(fleet.breaker.describe("node", "node-a")).to.match(/^1 of 6 /);
    });

    it("a replacement that comes back broken counts once, as itself", () => {
      const fleet = new Fleet(0.5, 3);
      fleet.add("calm", "node-b", 40, HEALTHY);
      fleet.add("a", "node-a", 4, HEALTHY);
      fleet.set("a-0", "node-a", BROKEN);
      fleet.deleteByUs("a-0");
      fleet.set("a-0-new", "node-a", HEALTHY);
      fleet.set("a-0-new", "node-a", BROKEN);
      expect(fleet.breaker.describe("node", "node-a")).to.match(
        /^1 of 4 meshed pods broken on node node-a \(more than 50%\)$/,
      );
      fleet.clock.advance(11 * 60_000);
      fleet.breaker.expire();
      expect(fleet.breaker.describe("node", "node-a")).to.match(/^1 of 4 /);
    });

    it("a delete that did not happen gives the slot back to the pod; a pod gone by another hand counts no more", () => {
      const fleet = new Fleet(0.5, 3);
      fleet.add("a", "node-a", 4, HEALTHY);
      fleet.set("a-0", "node-a", BROKEN);
      fleet.deleteByUs("a-0", false);
      expect(fleet.breaker.describe("node", "node-a")).to.match(
        /^1 of 4 meshed pods broken on node node-a \(more than 50%\)$/,
      );
      fleet.set("a-0", "node-a", undefined);
      expect(fleet.breaker.describe("node", "node-a")).to.match(/^0 of 3 /);
    });

    it("an owner that never recreates: the slot lingers up to ten minutes, then goes", () => {
      const fleet = new Fleet(0.5, 1);
      fleet.add("a", "node-a", 2, HEALTHY);
      fleet.set("a-0", "node-a", BROKEN);
      fleet.deleteByUs("a-0");
      fleet.clock.advance(WINDOW);
      fleet.breaker.expire();
      expect(fleet.breaker.describe("node", "node-a")).to.match(/^1 of 2 /);
      fleet.clock.advance(10 * 60_000);
      fleet.breaker.expire();
      expect(fleet.breaker.describe("node", "node-a")).to.match(/^0 of 1 /);
    });

    it("one pod per second over a minute is one wave: it opens once the share passes the threshold", () => {
      const fleet = new Fleet(0.5, 5);
      fleet.add("calm", "node-b", 100, HEALTHY);
      fleet.add("a", "node-a", 20, HEALTHY);
      const openedAt: number[] = [];
      for (let i = 0; i < 20; i++) {
        fleet.clock.advance(1_000);
        fleet.breaker.expire();
        if (fleet.set(`a-${i}`, "node-a", BROKEN).some((t) => t.open)) openedAt.push(i);
        if (fleet.openFor("node-a")) continue;
        fleet.deleteByUs(`a-${i}`);
        fleet.set(`a-${i}-new`, "node-a", HEALTHY);
      }
      expect(openedAt).to.deep.equal([10]); // the 11th broken of 20
      expect(fleet.openFor("node-a")).to.equal("node");
    });

    it("breakage explained by a CNI agent outage counts as meshed, not broken; the pod keeps its explanation", () => {
      const fleet = new Fleet(0.5, 3);
      expect(fleet.add("a", "node-a", 10, EXPLAINED)).to.deep.equal([]);
      expect(fleet.openFor("node-a")).to.equal(undefined);
      expect(fleet.breaker.describe("node", "node-a")).to.equal(
        "0 of 10 meshed pods broken on node node-a (more than 50%; 10 more broken by a CNI agent outage, not counted)",
      );
      // Later updates of the same broken pods keep it, whatever the caller says now.
      for (let i = 0; i < 10; i++) fleet.set(`a-${i}`, "node-a", BROKEN);
      expect(fleet.openFor("node-a")).to.equal(undefined);
      // Deleting them (repaired at the pace once the agent is back) does not open it either.
      for (let i = 0; i < 10; i++) expect(fleet.deleteByUs(`a-${i}`)).to.deep.equal([]);
      // A pod that breaks again with nothing to explain it counts.
      fleet.add("b", "node-a", 3, BROKEN);
      expect(fleet.openFor("node-a")).to.equal(undefined); // 3 of 13
    });
  });
});
