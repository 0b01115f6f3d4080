// Tests of the built-in mesh presets.

import { expect } from "chai";
import { isPresetName, presetNames, presetRule } from "../../../src/detect/presets.js";
import type { ValidatorRule } from "../../../src/detect/rule.js";

describe("presets", () => {
  it("lists istio, linkerd and istio-ambient", () => {
    expect(presetNames).to.deep.equal(["istio", "linkerd", "istio-ambient"]);
  });

  it("istio: istio-validation exit 126, marked by the sidecar.istio.io/status annotation key, agent istio-cni-node, Istio's startup taint", () => {
    expect(presetRule("istio")).to.deep.equal({
      name: "istio",
      initContainer: "istio-validation",
      exitCodes: [126],
      requiredAnnotation: { key: "sidecar.istio.io/status" },
      cniAgentSelector: "k8s-app=istio-cni-node",
      startupTaintKey: "cni.istio.io/not-ready",
    });
  });

  it("linkerd: linkerd-network-validator exit 95, marked by the linkerd.io/control-plane-ns label key, agent linkerd-cni", () => {
    expect(presetRule("linkerd")).to.deep.equal({
      name: "linkerd",
      initContainer: "linkerd-network-validator",
      exitCodes: [95],
      requiredLabel: { key: "linkerd.io/control-plane-ns" },
      cniAgentSelector: "k8s-app=linkerd-cni",
    });
  });

  it("every listed name resolves to a rule of that name", () => {
    for (const name of presetNames) expect(presetRule(name)?.name).to.equal(name);
  });

  it("unknown names, including inherited property names, resolve to undefined", () => {
    for (const name of ["", "Istio", "cilium", "constructor", "toString", "__proto__"]) {
      expect(presetRule(name), name).to.equal(undefined);
      expect(isPresetName(name), name).to.equal(false);
    }
  });

  it("presets are frozen, so no caller can change them for everyone", () => {
    const rule = presetRule("istio") as ValidatorRule | undefined;
    expect(Object.isFrozen(rule)).to.equal(true);
    expect(Object.isFrozen(rule?.exitCodes)).to.equal(true);
    expect(Object.isFrozen(rule?.requiredAnnotation)).to.equal(true);
    expect(Object.isFrozen(presetNames)).to.equal(true);
  });
});
