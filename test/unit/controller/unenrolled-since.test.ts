// UnenrolledSince: when this controller first saw each pod in ambient scope and not enrolled.
import { expect } from "chai";
import { UnenrolledSince } from "../../../src/controller/unenrolled-since.js";
import type { DetectContext } from "../../../src/detect/ambient.js";
import { presetRule } from "../../../src/detect/presets.js";
import type { AmbientRule } from "../../../src/detect/rule.js";
import { podFacts } from "../../support/pod-builders.js";
import { FakeClock } from "../fake-clock.js";

const ambient = presetRule("istio-ambient") as AmbientRule;
const MODE = "istio.io/dataplane-mode";

/** Namespace "mesh" carries the ambient label when `labelled` is true; the clock is at `nowMs`. */
function at(clock: FakeClock, nowMs: number, labelled: boolean): DetectContext {
  clock.advance(nowMs - clock.monotonic());
  return {
    nowMs: clock.now(),
    namespaceLabel: (namespace, key) => (labelled && namespace === "mesh" && key === MODE ? "ambient" : undefined),
  };
}

const pod = podFacts({ namespace: "mesh", uid: "u1", phase: "Running", sandboxSinceMs: 0 });

function setup() {
  const clock = new FakeClock(0);
  return { clock, since: new UnenrolledSince([ambient], clock) };
}

describe("UnenrolledSince", () => {
  it("starts the clock when the pod is first seen awaiting enrolment, and keeps it", () => {
    const { clock, since } = setup();
    since.observe(pod, at(clock, 1_000, false));
    expect(since.size).to.equal(0);
    since.observe(pod, at(clock, 5_000, true));
    since.observe(pod, at(clock, 9_000, true));
    clock.advance(11_000);
    expect(since.sinceOf("u1")).to.equal(5_000);
  });

  it("forgets a pod that left scope, so re-entering starts over", () => {
    const { clock, since } = setup();
    since.observe(pod, at(clock, 5_000, true));
    since.observe(pod, at(clock, 6_000, false));
    since.observe(pod, at(clock, 7_000, true));
    expect(since.sinceOf("u1")).to.equal(7_000);
  });

  it("keeps nothing for enrolled, finished or departed pods", () => {
    const { clock, since } = setup();
    since.observe({ ...pod, annotations: { "ambient.istio.io/redirection": "enabled" } }, at(clock, 1_000, true));
    since.observe({ ...pod, uid: "u2", phase: "Failed" }, at(clock, 1_000, true));
    since.observe({ ...pod, uid: "u3" }, at(clock, 1_000, true));
    since.forget("u3");
    expect(since.size).to.equal(0);
  });

  it("a pod asked about before it was observed starts its clock then (never earlier)", () => {
    const { clock, since } = setup();
    clock.advance(3_000);
    expect(since.sinceOf("u9")).to.equal(3_000);
    clock.advance(5_000);
    expect(since.sinceOf("u9")).to.equal(3_000);
  });

  it("keeps the time since the first sight when the wall clock is set forward or back: the grace neither ends early nor lasts", () => {
    for (const step of [3_600_000, -3_600_000]) {
      const { clock, since } = setup();
      since.observe(pod, at(clock, 5_000, true));
      clock.advance(2_000);
      clock.stepWallClock(step);
      expect(clock.now() - since.sinceOf("u1"), String(step)).to.equal(2_000);
    }
  });
});
