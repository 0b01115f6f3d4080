// Istio ambient detection: who is in scope (Istio's default selectors), and when an unenrolled pod is broken.
import { expect } from "chai";
import { type DetectContext, detect } from "../../../src/detect/detect.js";
import type { PodFacts } from "../../../src/detect/facts.js";
import { presetRule } from "../../../src/detect/presets.js";
import type { Rule } from "../../../src/detect/rule.js";
import { podFacts } from "./pod-facts-builder.js";

const ambient = presetRule("istio-ambient") as Rule;
const NOW = Date.parse("2026-12-02T12:00:00Z");
const running = (secondsAgo: number) => NOW - secondsAgo * 1000;

/** A namespace "mesh" labelled ambient, and "plain" not. */
const context: DetectContext = {
  nowMs: NOW,
  namespaceLabel: (namespace, key) =>
    namespace === "mesh" && key === "istio.io/dataplane-mode" ? "ambient" : undefined,
};

const pod = (overrides: Partial<PodFacts> = {}): PodFacts =>
  podFacts({ namespace: "mesh", labels: {}, annotations: {}, runningSinceMs: running(94), ...overrides });

describe("detect: istio-ambient", () => {
  it("reports a pod in an ambient namespace without the redirection annotation past the grace", () => {
    expect(detect(pod(), [ambient], context)).to.deep.equal({
      broken: true,
      rule: "istio-ambient",
      reason: "not enrolled: annotation missing for 94 s",
      terminal: false,
    });
  });

  it("reports a pod stuck in pending past the grace", () => {
    const stuck = pod({ annotations: { "ambient.istio.io/redirection": "pending" }, runningSinceMs: running(120) });
    expect(detect(stuck, [ambient], context)).to.include({ broken: true, reason: "not enrolled: pending for 120 s" });
  });

  it("leaves an enrolled pod alone", () => {
    const enrolled = pod({ annotations: { "ambient.istio.io/redirection": "enabled" } });
    expect(detect(enrolled, [ambient], context)).to.deep.equal({ broken: false });
  });

  it("within the grace it is not broken yet, and says when to look again", () => {
    expect(detect(pod({ runningSinceMs: running(20) }), [ambient], context)).to.deep.equal({
      broken: false,
      recheckAfterMs: 40_000,
    });
  });

  it("a pod not running yet is not judged (enrolment happens at sandbox setup)", () => {
    expect(detect(pod({ runningSinceMs: undefined }), [ambient], context)).to.deep.equal({ broken: false });
  });

  for (const [name, outOfScope] of [
    ["a pod that opts out with dataplane-mode=none", pod({ labels: { "istio.io/dataplane-mode": "none" } })],
    ["a hostNetwork pod", pod({ hostNetwork: true })],
    [
      "a sidecar-injected pod (judged by the sidecar rule only)",
      pod({ annotations: { "sidecar.istio.io/status": "" } }),
    ],
    ["a pod in a namespace without the label", pod({ namespace: "plain" })],
    [
      "a pod in an excluded namespace, even labelled",
      pod({ namespace: "kube-system", labels: { "istio.io/dataplane-mode": "ambient" } }),
    ],
    ["a pod already being deleted", pod({ deleting: true })],
  ] as const) {
    it(`leaves alone ${name}`, () => {
      expect(detect(outOfScope, [ambient], context).broken).to.equal(false);
    });
  }

  it("a pod labelled ambient is in scope in any namespace", () => {
    const labelled = pod({ namespace: "plain", labels: { "istio.io/dataplane-mode": "ambient" } });
    expect(detect(labelled, [ambient], context)).to.include({ broken: true });
  });

  it("without namespace labels (no context) only pod labels count", () => {
    expect(detect(pod(), [ambient]).broken).to.equal(false);
  });

  it("combines with the sidecar presets: a sidecar pod is judged by the istio rule", () => {
    const istio = presetRule("istio") as Rule;
    const sidecar = pod({
      annotations: { "sidecar.istio.io/status": "" },
      initContainers: [
        {
          name: "istio-validation",
          state: "waiting",
          lastTermination: { exitCode: 126, reason: "Error", message: undefined },
        },
      ],
    });
    expect(detect(sidecar, [istio, ambient], context)).to.include({ broken: true, rule: "istio" });
  });
});
