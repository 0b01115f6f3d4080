// Kubernetes name rules and selector syntax checks.

import { expect } from "chai";
import { isDnsSubdomain, isLabelValue, isQualifiedName } from "../../../src/config/names.js";
import { escapeFieldValue, fieldSelectorProblem, labelSelectorProblem } from "../../../src/config/selectors.js";

describe("config/names", () => {
  it("checks qualified names", () => {
    for (const good of [
      "a",
      "app",
      "app.kubernetes.io/name",
      "cni.istio.io/uninitialized",
      "A_b-c.D",
      "x/Y",
      `${"a".repeat(63)}`,
    ]) {
      expect(isQualifiedName(good), good).to.equal(true);
    }
    for (const bad of ["", "/a", "a/", "-a", "a-", "a b", "a/b/c", "UP.example/x", `${"a".repeat(64)}`, "a..b/c"]) {
      expect(isQualifiedName(bad), bad).to.equal(false);
    }
  });

  it("checks label values and DNS subdomains", () => {
    expect(isLabelValue("")).to.equal(true);
    expect(isLabelValue("v1.2_x")).to.equal(true);
    expect(isLabelValue("-v")).to.equal(false);
    expect(isLabelValue("a".repeat(64))).to.equal(false);
    expect(isDnsSubdomain("node-1.zone.example")).to.equal(true);
    expect(isDnsSubdomain("Node")).to.equal(false);
    expect(isDnsSubdomain(`${"a.".repeat(127)}a`)).to.equal(false);
  });
});

describe("config/selectors", () => {
  it("accepts every documented label selector form", () => {
    for (const good of [
      "",
      "k",
      "!k",
      "! k",
      "k=v",
      "k==v",
      "k!=v",
      "k=",
      "k in (a,b)",
      "k notin (a, b)",
      "a.io/k in(x),b,!c",
    ]) {
      expect(labelSelectorProblem(good), good).to.equal(undefined);
    }
  });

  it("accepts field selectors and escapes values", () => {
    for (const good of [
      "",
      "spec.nodeName=n1",
      "status.phase!=Running,metadata.name==x",
      "spec.nodeName=",
      "a=b\\,c",
    ]) {
      expect(fieldSelectorProblem(good), good).to.equal(undefined);
    }
    expect(escapeFieldValue("a,b=c\\")).to.equal("a\\,b\\=c\\\\");
    expect(fieldSelectorProblem(`a=${escapeFieldValue("x,=\\y")}`)).to.equal(undefined);
  });
});
