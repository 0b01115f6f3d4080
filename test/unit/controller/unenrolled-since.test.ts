// UnenrolledSince: when this controller first saw each pod in ambient scope and not enrolled.
import { expect } from "chai";
import { UnenrolledSince } from "../../../src/controller/unenrolled-since.js";
import type { DetectContext } from "../../../src/detect/ambient.js";
import { presetRule } from "../../../src/detect/presets.js";
import type { AmbientRule } from "../../../src/detect/rule.js";
import { podFacts } from "../../support/pod-builders.js";

const ambient = presetRule("istio-ambient") as AmbientRule;
const MODE = "istio.io/dataplane-mode";

/** Namespace "mesh" carries the ambient label when `labelled` is true. */
const at = (nowMs: number, labelled: boolean): DetectContext => ({
  nowMs,
  namespaceLabel: (namespace, key) => (labelled && namespace === "mesh" && key === MODE ? "ambient" : undefined),
});

const pod = podFacts({ namespace: "mesh", uid: "u1", phase: "Running", sandboxSinceMs: 0 });

describe("UnenrolledSince", () => {
  it("starts the clock when the pod is first seen awaiting enrolment, and keeps it", () => {
    const since = new UnenrolledSince([ambient]);
    since.observe(pod, at(1_000, false));
    expect(since.size).to.equal(0);
    since.observe(pod, at(5_000, true));
    since.observe(pod, at(9_000, true));
    expect(since.sinceOf("u1", 20_000)).to.equal(5_000);
  });

  it("forgets a pod that left scope, so re-entering starts over", () => {
    const since = new UnenrolledSince([ambient]);
    since.observe(pod, at(5_000, true));
    since.observe(pod, at(6_000, false));
    since.observe(pod, at(7_000, true));
    expect(since.sinceOf("u1", 20_000)).to.equal(7_000);
  });

  it("keeps nothing for enrolled, finished or departed pods", () => {
    const since = new UnenrolledSince([ambient]);
    since.observe({ ...pod, annotations: { "ambient.istio.io/redirection": "enabled" } }, at(1_000, true));
    since.observe({ ...pod, uid: "u2", phase: "Failed" }, at(1_000, true));
    since.observe({ ...pod, uid: "u3" }, at(1_000, true));
    since.forget("u3");
    expect(since.size).to.equal(0);
  });

  it("a pod asked about before it was observed starts its clock then (never earlier)", () => {
    const since = new UnenrolledSince([ambient]);
    expect(since.sinceOf("u9", 3_000)).to.equal(3_000);
    expect(since.sinceOf("u9", 8_000)).to.equal(3_000);
  });
});
