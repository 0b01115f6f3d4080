// The storm breaker's slots of pods we deleted go when their window ends, by a timer the guards arm for exactly that
// moment: none while no slot is waiting (an idle controller does not wake up), one at the earliest due time.

import { expect } from "chai";
import type { PodFacts } from "../../../src/detect/facts.js";
import { SafetyGuards } from "../../../src/safety/guards.js";
import type { StormTransition } from "../../../src/safety/storm-breaker.js";
import { podFacts } from "../../support/pod-builders.js";
import { guardsOff } from "../../support/test-reconciler.js";
import { FakeClock } from "../fake-clock.js";

const SECOND = 1_000;
const START = Date.parse("2025-03-04T10:20:00Z");
const WINDOW = 10 * SECOND;

let serial = 0;
/** A pod nothing owns: its slot waits only for the window, not for a replacement. */
const pod = (): PodFacts =>
  podFacts({ uid: `uid-${++serial}`, name: `bare-${serial}`, nodeName: "node-a", owner: undefined });

function setup() {
  const clock = new FakeClock(START);
  const transitions: StormTransition[] = [];
  const guards = new SafetyGuards(
    guardsOff({
      loopBackoff: { baseMs: 60 * SECOND, maxMs: 30 * 60 * SECOND },
      storm: { maxBrokenFraction: 0.5, minBroken: 2, windowMs: WINDOW },
      onStormTransition: (transition) => transitions.push(transition),
      clock,
    }),
  );
  const meshed = (facts: PodFacts, broken: boolean) =>
    guards.standingChanged(undefined, { facts, standing: { meshed: true, broken } });
  /** Deleted by us and gone from the cache, as the reconciler and the watch report it. */
  const deleteAndGo = (facts: PodFacts) => {
    guards.beforeDelete(facts);
    guards.afterDelete(facts, "deleted");
    guards.standingChanged({ facts, standing: { meshed: true, broken: true } }, undefined);
    guards.podGone(facts.uid);
  };
  return { clock, guards, transitions, meshed, deleteAndGo };
}

describe("safety/storm expiry timer", () => {
  it("arms no timer while no deleted pod's slot is waiting", () => {
    const { clock, meshed } = setup();
    for (let i = 0; i < 3; i++) meshed(pod(), i === 0);
    expect(clock.pendingTimers).to.equal(0);
  });

  it("closes a breaker our deletes hold open when their window ends, with no one calling expire()", () => {
    const { clock, guards, transitions, meshed, deleteAndGo } = setup();
    const [a, b] = [pod(), pod()];
    meshed(pod(), false);
    meshed(a, true);
    meshed(b, true); // 2 of 3 broken: open
    expect(transitions).to.deep.equal([
      { scope: "node", node: "node-a", open: true },
      { scope: "cluster", node: "", open: true },
    ]);
    deleteAndGo(a);
    clock.advance(2 * SECOND);
    deleteAndGo(b);
    expect(clock.nextDue).to.equal(START + WINDOW);
    clock.advance(WINDOW - 2 * SECOND - 1);
    expect(guards.storm.describe("node", "node-a")).to.match(/^2 of 3 meshed pods broken/);
    clock.advance(1); // a's slot goes: 1 of 2, below --storm-min-broken
    expect(guards.storm.describe("node", "node-a")).to.match(/^1 of 2 meshed pods broken/);
    expect(transitions.slice(2)).to.deep.equal([
      { scope: "node", node: "node-a", open: false },
      { scope: "cluster", node: "", open: false },
    ]);
    // Re-armed for b's slot, then nothing.
    expect(clock.nextDue).to.equal(START + 2 * SECOND + WINDOW);
    clock.advance(2 * SECOND);
    expect(guards.storm.describe("node", "node-a")).to.match(/^0 of 1 meshed pods broken/);
    expect(clock.pendingTimers).to.equal(0);
  });
});
