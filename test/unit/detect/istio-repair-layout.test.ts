// Which Istio repair settings apply: those of the namespace where Istio's CNI agent runs, wherever that is; agents
// running without settings that say how they repair are unknown (held as in-place), never "off".
import { expect } from "chai";
import { type IstioNamespaceFacts, resolveIstioRepair } from "../../../src/detect/istio-repair-layout.js";
import { describeIstioRepair, istioRepairMode } from "../../../src/detect/istio-repair-settings.js";

const ns = (namespace: string, facts: Partial<Omit<IstioNamespaceFacts, "namespace">>): IstioNamespaceFacts => ({
  namespace,
  configMap: undefined,
  daemonSetEnv: undefined,
  agentPods: false,
  ...facts,
});
const modeOf = (...facts: IstioNamespaceFacts[]) => istioRepairMode(resolveIstioRepair(facts).state);

describe("resolveIstioRepair", () => {
  it("nothing of Istio's anywhere: absent (off)", () => {
    expect(resolveIstioRepair([]).state).to.deep.equal({ kind: "absent" });
  });

  for (const where of ["istio-system", "kube-system", "mesh-cni"]) {
    it(`reads the settings where the agent runs: ${where}`, () => {
      const { state } = resolveIstioRepair([
        ns(where, { configMap: { REPAIR_DELETE_PODS: "true", REPAIR_REPAIR_PODS: "false" }, daemonSetEnv: {} }),
      ]);
      expect(istioRepairMode(state)).to.equal("delete");
      expect(describeIstioRepair(state)).to.include(`ConfigMap ${where}/istio-cni-config`);
    });
  }

  it("a ConfigMap of Istio's chart with no REPAIR_* key: Istio's defaults (in place)", () => {
    expect(modeOf(ns("kube-system", { configMap: {}, agentPods: true }))).to.equal("in_place");
  });

  it("the DaemonSet's literal env wins over the ConfigMap", () => {
    const facts = ns("istio-system", {
      configMap: { REPAIR_REPAIR_PODS: "true" },
      daemonSetEnv: { REPAIR_REPAIR_PODS: "false", REPAIR_LABEL_PODS: "true" },
    });
    expect(modeOf(facts)).to.equal("label");
  });

  it("agent pods (or its DaemonSet) without a ConfigMap or a REPAIR_* env: unknown, naming the namespace", () => {
    for (const facts of [
      ns("kube-system", { agentPods: true }),
      ns("kube-system", { daemonSetEnv: {} }),
      ns("kube-system", { daemonSetEnv: { OTHER: "x" }, agentPods: true }),
    ]) {
      const { state } = resolveIstioRepair([facts]);
      expect(state.kind).to.equal("unknown");
      expect(describeIstioRepair(state)).to.include("runs in namespace kube-system").and.include("held as if");
    }
  });

  it("a ConfigMap left where no agent runs is ignored when the agent runs elsewhere", () => {
    const stale = ns("istio-system", { configMap: { REPAIR_ENABLED: "false" } });
    expect(modeOf(stale, ns("kube-system", { agentPods: true, configMap: {} }))).to.equal("in_place");
    expect(modeOf(stale, ns("kube-system", { agentPods: true }))).to.equal("unknown");
  });

  it("no agent seen (gate off, DaemonSet named otherwise): the ConfigMaps say what Istio does", () => {
    expect(modeOf(ns("istio-system", { configMap: { REPAIR_ENABLED: "false" } }))).to.equal("off");
    expect(modeOf(ns("istio-system", { configMap: {} }))).to.equal("in_place");
  });

  it("agents in two namespaces: one mode if they agree, unknown if not", () => {
    const inPlace = (namespace: string) => ns(namespace, { configMap: {}, agentPods: true });
    const agree = resolveIstioRepair([inPlace("istio-system"), inPlace("kube-system")]).state;
    expect(istioRepairMode(agree)).to.equal("in_place");
    expect(describeIstioRepair(agree)).to.include(
      "istio-system/istio-cni-config; ConfigMap kube-system/istio-cni-config",
    );
    const deletes = ns("kube-system", { configMap: { REPAIR_REPAIR_PODS: "false", REPAIR_DELETE_PODS: "true" } });
    const differ = resolveIstioRepair([inPlace("istio-system"), { ...deletes, agentPods: true }]).state;
    expect(differ.kind).to.equal("unknown");
    expect(describeIstioRepair(differ)).to.include("istio-system, kube-system repair differently");
    expect(modeOf(inPlace("istio-system"), ns("kube-system", { agentPods: true }))).to.equal("unknown");
  });

  it("passes on the warning for a value that is not a boolean", () => {
    const { warnings } = resolveIstioRepair([ns("kube-system", { configMap: { REPAIR_DELETE_PODS: "yes" } })]);
    expect(warnings).to.deep.equal([
      'ConfigMap kube-system/istio-cni-config: REPAIR_DELETE_PODS="yes" is not a boolean; Istio\'s default false applies',
    ]);
  });
});
