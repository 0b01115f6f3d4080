// Istio ambient detection: who is in scope (Istio's default selectors), and when an unenrolled pod is broken.
import { expect } from "chai";
import { type DetectContext, detect } from "../../../src/detect/detect.js";
import type { PodFacts } from "../../../src/detect/facts.js";
import { presetRule } from "../../../src/detect/presets.js";
import type { Rule } from "../../../src/detect/rule.js";
import { podFacts } from "../../support/pod-builders.js";

const ambient = presetRule("istio-ambient") as Rule;
const NOW = Date.parse("2026-12-02T12:00:00Z");
const ago = (seconds: number) => NOW - seconds * 1000;
const SANDBOX = "pod sandbox set up";

/** A namespace "mesh" labelled ambient, and "plain" not. */
const context: DetectContext = {
  nowMs: NOW,
  namespaceLabel: (namespace, key) =>
    namespace === "mesh" && key === "istio.io/dataplane-mode" ? "ambient" : undefined,
};

const pod = (overrides: Partial<PodFacts> = {}): PodFacts =>
  podFacts({ namespace: "mesh", labels: {}, annotations: {}, sandboxSinceMs: ago(94), ...overrides });

describe("detect: istio-ambient", () => {
  it("reports a pod in an ambient namespace without the redirection annotation past the grace", () => {
    expect(detect(pod(), [ambient], context)).to.deep.equal({
      broken: true,
      rule: "istio-ambient",
      reason: "not enrolled: annotation missing for 94 s",
      terminal: false,
      graceStart: { atMs: ago(94), cause: SANDBOX },
    });
  });

  it("reports a pod stuck in pending past the grace", () => {
    const stuck = pod({ annotations: { "ambient.istio.io/redirection": "pending" }, sandboxSinceMs: ago(120) });
    expect(detect(stuck, [ambient], context)).to.include({ broken: true, reason: "not enrolled: pending for 120 s" });
  });

  it("leaves an enrolled pod alone", () => {
    const enrolled = pod({ annotations: { "ambient.istio.io/redirection": "enabled" } });
    expect(detect(enrolled, [ambient], context)).to.deep.equal({ broken: false });
  });

  it("within the grace it is not broken yet, and says when to look again", () => {
    expect(detect(pod({ sandboxSinceMs: ago(20) }), [ambient], context)).to.deep.equal({
      broken: false,
      recheckAfterMs: 40_000,
      graceStart: { atMs: ago(20), cause: SANDBOX },
    });
  });

  it("a pod without a sandbox yet is not judged (enrolment happens at sandbox setup)", () => {
    expect(detect(pod({ sandboxSinceMs: undefined }), [ambient], context)).to.deep.equal({ broken: false });
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
          lastTermination: {
            exitCode: 126,
            reason: "Error",
            message: undefined,
            startedAtMs: undefined,
            finishedAtMs: undefined,
          },
          restartCount: 1,
        },
      ],
    });
    expect(detect(sidecar, [istio, ambient], context)).to.include({ broken: true, rule: "istio" });
  });
});

describe("detect: istio-ambient enrolment grace", () => {
  const SCOPE = "entered ambient scope (seen by this controller)";
  const ZTUNNEL = "ztunnel on node node-a turned Ready (seen by this controller)";
  /** The context run gives detection: what this controller saw, and when the node's agents turned Ready. */
  const seen = (scopeSecondsAgo: number, agentsSecondsAgo?: number): DetectContext => ({
    ...context,
    seenUnenrolledSince: () => ago(scopeSecondsAgo),
    readiness: {
      graceStart: (node, rule) =>
        agentsSecondsAgo === undefined || node !== "node-a" || rule !== "istio-ambient"
          ? undefined
          : { atMs: ago(agentsSecondsAgo), cause: ZTUNNEL },
    },
  });

  it("counts from when the pod was seen entering scope, when that is the latest", () => {
    // Running for minutes, namespace labelled 20 s ago: 40 s of grace left, whatever the sandbox's age.
    expect(detect(pod({ sandboxSinceMs: ago(300) }), [ambient], seen(20))).to.deep.equal({
      broken: false,
      recheckAfterMs: 40_000,
      graceStart: { atMs: ago(20), cause: SCOPE },
    });
    const judged = detect(pod({ sandboxSinceMs: ago(300) }), [ambient], seen(61));
    expect(judged).to.include({ broken: true, reason: "not enrolled: annotation missing for 61 s" });
    expect(judged).to.have.deep.property("graceStart", { atMs: ago(61), cause: SCOPE });
  });

  it("counts from the node's agents turning Ready, when that is the latest", () => {
    expect(detect(pod({ sandboxSinceMs: ago(300) }), [ambient], seen(200, 5))).to.deep.equal({
      broken: false,
      recheckAfterMs: 55_000,
      graceStart: { atMs: ago(5), cause: ZTUNNEL },
    });
    // Another node's agents say nothing about this pod.
    expect(detect(pod({ sandboxSinceMs: ago(300), nodeName: "node-b" }), [ambient], seen(200, 5))).to.include({
      broken: true,
    });
  });

  it("counts from the sandbox when it came last (a pod created in an ambient namespace)", () => {
    expect(detect(pod({ sandboxSinceMs: ago(10) }), [ambient], seen(30, 100))).to.deep.equal({
      broken: false,
      recheckAfterMs: 50_000,
      graceStart: { atMs: ago(10), cause: SANDBOX },
    });
  });

  it("a crash-looping app does not hold judging back: only the sandbox matters", () => {
    // The facts of a pod whose app container is in CrashLoopBackOff still carry its sandbox time.
    const crashLooping = pod({ phase: "Running", sandboxSinceMs: ago(90) });
    expect(detect(crashLooping, [ambient], seen(90))).to.include({ broken: true });
  });

  for (const phase of ["Failed", "Succeeded"]) {
    it(`a ${phase} pod is not judged at all: nothing of it runs that could bypass the mesh`, () => {
      expect(detect(pod({ phase, sandboxSinceMs: ago(600) }), [ambient], seen(600))).to.deep.equal({
        broken: false,
      });
    });
  }
});
