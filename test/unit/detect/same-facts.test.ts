// Tests of sameFacts: equal on everything that matters, blind to resourceVersion.

import { expect } from "chai";
import type { PodFacts } from "../../../src/detect/facts.js";
import { sameFacts } from "../../../src/detect/to-pod-facts.js";
import { exited, init, podFacts } from "../../support/pod-builders.js";

const base = podFacts({
  labels: { app: "reviews" },
  annotations: { "sidecar.istio.io/status": "{}" },
  initContainers: [init("istio-validation", "waiting", exited(126, "m"))],
});

describe("sameFacts", () => {
  it("is true for equal facts built separately", () => {
    const copy: PodFacts = structuredClone(base);
    expect(sameFacts(base, copy)).to.equal(true);
  });

  it("ignores resourceVersion (every write bumps it; it changes no verdict)", () => {
    expect(sameFacts(base, { ...base, resourceVersion: "1001" })).to.equal(true);
  });

  const changes: [string, Partial<PodFacts>][] = [
    ["namespace", { namespace: "other" }],
    ["name", { name: "other" }],
    ["uid", { uid: "other" }],
    ["nodeName", { nodeName: undefined }],
    ["phase", { phase: "Running" }],
    ["restartPolicy", { restartPolicy: "Never" }],
    ["deleting", { deleting: true }],
    ["owner removed", { owner: undefined }],
    ["owner uid", { owner: { kind: "ReplicaSet", name: "reviews-7d9f8b6c5", uid: "other" } }],
    ["label value", { labels: { app: "ratings" } }],
    ["label added", { labels: { app: "reviews", version: "v1" } }],
    ["label key", { labels: { App: "reviews" } }],
    ["annotation removed", { annotations: {} }],
    ["init state", { initContainers: [init("istio-validation", "running", exited(126, "m"))] }],
    ["init state terminated", { initContainers: [init("istio-validation", exited(126, "m"), exited(126, "m"))] }],
    ["init last exit code", { initContainers: [init("istio-validation", "waiting", exited(1, "m"))] }],
    ["init last message", { initContainers: [init("istio-validation", "waiting", exited(126, "n"))] }],
    ["init last finishedAt", { initContainers: [init("istio-validation", "waiting", exited(126, "m", 1_000))] }],
    ["init restartCount", { initContainers: [init("istio-validation", "waiting", exited(126, "m"), 1)] }],
    ["init last removed", { initContainers: [init("istio-validation", "waiting")] }],
    ["init name", { initContainers: [init("linkerd-network-validator", "waiting", exited(126, "m"))] }],
    ["init added", { initContainers: [...base.initContainers, init("x", "waiting")] }],
  ];
  for (const [what, change] of changes) {
    it(`is false when ${what} differs, both ways`, () => {
      const other = { ...base, ...change };
      expect(sameFacts(base, other)).to.equal(false);
      expect(sameFacts(other, base)).to.equal(false);
    });
  }
});
