// --cni-agent-namespace: one namespace for every rule, or per rule, so Istio's and Linkerd's agents need not share one.
import { expect } from "chai";
import { agentNamespaceOf, parseAgentNamespaces } from "../../../src/config/agent-namespaces.js";

const parsed = (text: string) => {
  const result = parseAgentNamespaces(text);
  if (!result.ok) throw new Error(result.reason);
  return result.value;
};

describe("--cni-agent-namespace", () => {
  it("empty: every namespace for every rule", () => {
    expect(agentNamespaceOf(parsed(""), "istio")).to.equal(undefined);
  });

  it("a bare namespace: every rule", () => {
    const namespaces = parsed("kube-system");
    expect([agentNamespaceOf(namespaces, "istio"), agentNamespaceOf(namespaces, "linkerd")]).to.deep.equal([
      "kube-system",
      "kube-system",
    ]);
  });

  it("per rule, a bare namespace for the rules not named, and all namespaces without one", () => {
    const namespaces = parsed("istio=kube-system, linkerd=linkerd-cni");
    expect(agentNamespaceOf(namespaces, "istio")).to.equal("kube-system");
    expect(agentNamespaceOf(namespaces, "linkerd")).to.equal("linkerd-cni");
    expect(agentNamespaceOf(namespaces, "custom")).to.equal(undefined);
    expect(agentNamespaceOf(parsed("istio=kube-system,cni"), "custom")).to.equal("cni");
  });

  it("refuses what it cannot read", () => {
    for (const bad of ["Kube_System", "istio=", "=kube-system", "a=b=c", "a,b", "istio=a,istio=b", "x,,y"]) {
      expect(parseAgentNamespaces(bad).ok, bad).to.equal(false);
    }
  });
});
