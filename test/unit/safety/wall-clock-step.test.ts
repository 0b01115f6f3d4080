// A wall clock set forward or back (an NTP step, a VM resumed from a snapshot and its clock corrected) must not
// shorten or stretch what the safety state machines measure in-process: how long this process has seen an agent
// Ready, how long a deleted pod keeps its storm slot, the deletion pace, the loop backoff, the queue's delays.

import { expect } from "chai";
import type { PodFacts } from "../../../src/detect/facts.js";
import { type AgentFacts, CniAgents } from "../../../src/informer/cni-agent-pods.js";
import { WorkQueue } from "../../../src/queue/work-queue.js";
import { SafetyGuards } from "../../../src/safety/guards.js";
import { LoopBackoff } from "../../../src/safety/loop-backoff.js";
import type { StormTransition } from "../../../src/safety/storm-breaker.js";
import { TokenBucket } from "../../../src/safety/token-bucket.js";
import { cniReadiness } from "../../support/agent-readiness.js";
import { podFacts, uniquePod } from "../../support/pod-builders.js";
import { guardsOff } from "../../support/test-reconciler.js";
import { FakeClock } from "../fake-clock.js";

const SECOND = 1_000;
const HOUR = 3_600 * SECOND;
const START = Date.parse("2025-03-04T10:20:00.700Z");
const OWNER = { kind: "ReplicaSet", name: "reviews-7d9f8b6c5", uid: "owner-1" };
/** Both directions a wall clock is set in. */
const STEPS = [HOUR, -HOUR];

describe("safety: a stepped wall clock", () => {
  describe("the node-agent gate on this controller's own sighting (observed)", () => {
    const readyPod = (sinceMs: number) => ({
      metadata: { namespace: "istio-system", name: "istio-cni-node-a" },
      spec: { nodeName: "node-a" },
      status: {
        phase: "Running",
        conditions: [{ type: "Ready", status: "True", lastTransitionTime: new Date(sinceMs) }],
      },
    });

    function gated(clock: FakeClock) {
      const agents = new CniAgents();
      const guards = new SafetyGuards(
        guardsOff({
          readiness: cniReadiness(agents, 10 * SECOND, { clock }),
          clock,
        }),
      );
      return { agents, guards };
    }

    for (const step of STEPS) {
      it(`holds for the full min-ready after the agent is seen Ready, with the wall clock set ${step > 0 ? "forward" : "back"} an hour`, () => {
        const clock = new FakeClock(START);
        const { agents, guards } = gated(clock);
        // The kubelet's Ready time is an hour old; this controller sees the agent Ready only now.
        agents.store.upsert(agents.toFacts(readyPod(START - 2 * HOUR), clock.monotonic()) as AgentFacts);
        const pod = uniquePod({ nodeName: "node-a", owner: OWNER });
        clock.advance(2 * SECOND);
        clock.stepWallClock(step);
        expect(guards.view(pod, "istio").agent).to.deep.include({ reason: "cni_agent_not_ready", waitMs: 8 * SECOND });
        clock.advance(8 * SECOND);
        expect(guards.view(pod, "istio").agent).to.equal(undefined);
      });
    }
  });

  describe("the storm breaker's slots of pods we deleted", () => {
    let serial = 0;
    const bare = (): PodFacts =>
      podFacts({ uid: `uid-${++serial}`, name: `bare-${serial}`, nodeName: "node-a", owner: undefined });

    for (const step of STEPS) {
      it(`keep their slot for the window and go when it ends, with the wall clock set ${step > 0 ? "forward" : "back"} an hour`, () => {
        const clock = new FakeClock(START);
        const transitions: StormTransition[] = [];
        const guards = new SafetyGuards(
          guardsOff({
            loopBackoff: { baseMs: 60 * SECOND, maxMs: 30 * 60 * SECOND },
            storm: { maxBrokenFraction: 0.5, minBroken: 2, windowMs: 10 * SECOND },
            onStormTransition: (transition) => transitions.push(transition),
            clock,
          }),
        );
        const meshed = (facts: PodFacts, broken: boolean) =>
          guards.standingChanged(undefined, { facts, standing: { meshed: true, broken } });
        const [a, b] = [bare(), bare()];
        meshed(bare(), false);
        meshed(a, true);
        meshed(b, true); // 2 of 3 broken: open
        for (const facts of [a, b]) {
          guards.beforeDelete(facts);
          guards.afterDelete(facts, "deleted");
          guards.standingChanged({ facts, standing: { meshed: true, broken: true } }, undefined);
          guards.podGone(facts.uid);
        }
        transitions.length = 0;
        clock.stepWallClock(step);
        guards.expire();
        clock.advance(9 * SECOND);
        expect(transitions, "closed before the window ended").to.deep.equal([]);
        clock.advance(1 * SECOND);
        expect(transitions.map((t) => t.open)).to.deep.equal([false, false]);
      });
    }
  });

  describe("the deletion pace", () => {
    for (const step of STEPS) {
      it(`gives the next token one interval after the last, with the wall clock set ${step > 0 ? "forward" : "back"} an hour`, () => {
        const clock = new FakeClock(START);
        const tokens = new TokenBucket({ ratePerMinute: 1, burst: 1, clock });
        expect(tokens.take("a")).to.equal(0);
        clock.stepWallClock(step);
        expect(tokens.take("b")).to.equal(60 * SECOND);
        clock.advance(60 * SECOND);
        expect(tokens.take("b")).to.equal(0);
      });
    }
  });

  describe("the loop backoff", () => {
    for (const step of STEPS) {
      it(`holds a broken replacement for the backoff after our delete, with the wall clock set ${step > 0 ? "forward" : "back"} an hour`, () => {
        const clock = new FakeClock(START);
        const loop = new LoopBackoff({ baseMs: 60 * SECOND, maxMs: 8 * 60 * SECOND, clock });
        const replica = (createdAtMs: number) =>
          uniquePod(
            { nodeName: "node-a", owner: OWNER, createdAtMs: Math.floor(createdAtMs / 1000) * 1000 },
            "reviews-7d9f8b6c5",
          );
        loop.recordDeletion(replica(START - HOUR));
        // The replacement was created (by the API server's clock) right after our delete.
        const replacement = replica(START + SECOND);
        clock.advance(1 * SECOND);
        clock.stepWallClock(step);
        expect(loop.check(replacement)).to.deep.include({ waitMs: 59 * SECOND, deletions: 1 });
        clock.advance(59 * SECOND);
        expect(loop.check(replacement)).to.deep.include({ waitMs: 0 });
      });
    }
  });

  describe("the work queue's delays", () => {
    for (const step of STEPS) {
      it(`hands a delayed key out when its delay has passed, with the wall clock set ${step > 0 ? "forward" : "back"} an hour`, () => {
        const clock = new FakeClock(START);
        const queue = new WorkQueue({ clock, backoff: { baseMs: 5, maxMs: 1_000 } });
        queue.addAfter("a", 10 * SECOND);
        clock.stepWallClock(step);
        // Another delay re-arms the queue's one timer, judged against the clock now.
        queue.addAfter("b", 20 * SECOND);
        clock.advance(9 * SECOND);
        expect(queue.depth, "handed out early").to.equal(0);
        clock.advance(1 * SECOND);
        expect(queue.depth).to.equal(1);
        clock.advance(10 * SECOND);
        expect(queue.depth).to.equal(2);
      });
    }
  });
});
