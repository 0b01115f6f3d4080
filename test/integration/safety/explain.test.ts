// `cni-repair explain <namespace>/<pod>`: the whole judgement about one pod against the real API server, as JSON.
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { parse } from "yaml";
import type { Explanation } from "../../../src/cli/explain.js";
import { podRequests } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { createCniAgent } from "../../harness/cni-agents.js";
import { runCommand } from "../../harness/controller-process.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

describe("cni-repair explain", () => {
  let api: CoreV1Api;
  let namespace: string;

  beforeEach(async () => {
    api = controlPlane().kubeConfig().makeApiClient(CoreV1Api);
    namespace = await createTestNamespace(api);
  });

  const explain = async (pod: string, ...args: string[]) => {
    const result = await runCommand([
      "explain",
      `${namespace}/${pod}`,
      "-o",
      "json",
      `--kubeconfig=${controlPlane().kubeconfigPath}`,
      `--field-selector=metadata.namespace=${namespace}`,
      // The test's CNI agents are not Istio's: nothing repairs in place (see e2e-controller.ts).
      "--istio-repair=ignore",
      ...args,
    ]);
    expect(result.code, result.stderr).to.equal(0);
    return JSON.parse(result.stdout) as Explanation;
  };
  const gateOff = "--cni-agent-gate=off";

  it("a broken pod: its rule, the validator's states, broken, and delete (label, report in the other modes)", async () => {
    const pod = await createPodInState(api, { namespace, name: "broken", nodeName: "n1" });
    const explained = await explain("broken", gateOff);
    expect(explained.pod).to.deep.equal({
      namespace,
      name: "broken",
      uid: pod.metadata?.uid,
      node: "n1",
      phase: "Pending",
      owner: { kind: "ReplicaSet", name: "app-7d9f" },
      staticPod: false,
      deleting: false,
    });
    expect(explained.scope.watched).to.equal(true);
    expect(explained.rule.name).to.equal("istio");
    expect(explained.validator).to.deep.include({ container: "istio-validation", state: "waiting" });
    expect(explained.validator?.lastState).to.include({ exitCode: 126 });
    expect(explained.verdict).to.deep.equal({
      broken: true,
      reason: "istio-validation exited 126 (lastState)",
      terminal: false,
    });
    expect(explained.guards).to.deep.equal({});
    // One meshed pod, broken, on n1: the share is there even while the breaker stays shut (under --storm-min-broken).
    expect(explained.storm.node).to.match(/^1 of 1 meshed pods broken on node n1 \(more than 50%/);
    expect(explained.storm.cluster).to.match(/^1 of 1 meshed pods broken in the cluster/);
    expect(explained.mode).to.equal("delete");
    expect(explained.decision).to.deep.equal({ action: "delete", hold: null, skip: null });
    expect(explained.modes.label.action).to.equal("label");
    expect(explained.modes.report.action).to.equal("report");
    // No writes: explain only reads.
    const writes = podRequests(controlPlane().auditLogPath, namespace).filter(
      (event) => !["get", "list", "watch"].includes(event.verb) && (event.userAgent ?? "").startsWith("cni-repair/"),
    );
    expect(writes).to.deep.equal([]);
  });

  it("-o yaml prints the same object as -o json", async () => {
    await createPodInState(api, { namespace, name: "broken", nodeName: "n1" });
    const json = await explain("broken", gateOff);
    const yaml = await runCommand([
      "explain",
      `${namespace}/broken`,
      "-o",
      "yaml",
      `--kubeconfig=${controlPlane().kubeconfigPath}`,
      `--field-selector=metadata.namespace=${namespace}`,
      "--istio-repair=ignore",
      gateOff,
    ]);
    expect(yaml.code, yaml.stderr).to.equal(0);
    expect(parse(yaml.stdout)).to.deep.equal(json);
  });

  it("a healthy meshed pod: its rule, the validator passed, nothing to do", async () => {
    await createPodInState(api, { namespace, name: "healthy" }, { validator: { kind: "succeeded" } });
    const explained = await explain("healthy", gateOff);
    expect(explained.rule.name).to.equal("istio");
    expect(explained.validator?.state).to.deep.include({ exitCode: 0 });
    expect(explained.verdict.broken).to.equal(false);
    expect(explained.decision.action).to.equal("none");
    expect(explained.modes.delete.action).to.equal("none");
  });

  it("an unmeshed pod: no rule, and why (the marker each rule needs is missing)", async () => {
    await createPodInState(api, { namespace, name: "plain", mesh: "none" }, { validator: { kind: "succeeded" } });
    const explained = await explain("plain", gateOff);
    expect(explained.rule.name).to.equal(null);
    expect(explained.rule.detail).to.include("istio: missing annotation sidecar.istio.io/status");
    expect(explained.validator).to.equal(null);
    expect(explained.verdict.broken).to.equal(false);
    expect(explained.decision.action).to.equal("none");
  });

  it("held pods: bare (labelled in delete mode), static, finished, each with its reason and detail", async () => {
    await createPodInState(api, { namespace, name: "bare", bare: true });
    await createPodInState(api, { namespace, name: "static", owner: { kind: "Node", name: "n1", apiVersion: "v1" } });
    await createPodInState(
      api,
      { namespace, name: "finished", restartPolicy: "Never" },
      { validator: { kind: "failed", exitCode: 126 }, phase: "Failed" },
    );
    const bare = await explain("bare", gateOff);
    expect(bare.pod.owner).to.equal(null);
    expect(bare.decision.action).to.equal("label");
    expect(bare.decision.hold).to.include({ reason: "bare_pod", until: null });
    expect(bare.modes.report.hold?.reason).to.equal("bare_pod");
    expect(bare.modes.label).to.deep.equal({ action: "label", hold: null, skip: null });

    const staticPod = await explain("static", gateOff);
    expect(staticPod.pod.staticPod).to.equal(true);
    expect(staticPod.decision.action).to.equal("hold");
    expect(staticPod.decision.hold?.reason).to.equal("static_pod");

    const finished = await explain("finished", gateOff);
    expect(finished.verdict).to.include({ broken: true, terminal: true });
    expect(finished.validator?.state).to.deep.include({ exitCode: 126 });
    expect(finished.decision.hold?.reason).to.equal("terminal");
    expect(finished.decision.hold?.detail).to.include("phase Failed");
  });

  it("held for the CNI agent: none Ready on the node, or Ready too briefly (with when it turned Ready and until when)", async () => {
    // Kubernetes keeps condition times in whole seconds. Ready for 20 s of the 60 s required, by the kubelet.
    const readySince = new Date(Math.floor(Date.now() / 1000 - 20) * 1000);
    await createCniAgent(api, { namespace, mesh: "istio", nodeName: "n-down" });
    await createCniAgent(api, { namespace, mesh: "istio", nodeName: "n-fresh", readySince });
    await createPodInState(api, { namespace, name: "on-down", nodeName: "n-down" });
    await createPodInState(api, { namespace, name: "on-fresh", nodeName: "n-fresh" });
    const agentArgs = [`--cni-agent-namespace=${namespace}`, "--cni-agent-min-ready=60s"];

    const down = await explain("on-down", ...agentArgs);
    expect(down.decision.hold).to.include({ reason: "cni_agent_not_ready", until: null });
    expect(down.decision.hold?.detail).to.include("no Ready CNI agent pod on node n-down");
    expect(down.agents).to.have.length(1);
    expect(down.agents[0]).to.include({ node: "n-down", ready: false, readySince: null, minReadySeconds: 60 });
    expect(down.guards.agent?.reason).to.equal("cni_agent_not_ready");

    // A one-shot look goes by the kubelet's Ready time: held until 60 s after it.
    const fresh = await explain("on-fresh", ...agentArgs);
    expect(fresh.agents[0]).to.include({ node: "n-fresh", ready: true, readySince: readySince.toISOString() });
    expect(fresh.decision.hold?.reason).to.equal("cni_agent_not_ready");
    const until = Date.parse(fresh.decision.hold?.until ?? "");
    // Within a second or two of readySince + 60 s (the hold's wait is rounded to the clock of the explain).
    expect(Math.abs(until - (readySince.getTime() + 60_000))).to.be.at.most(2_000);
    // Label mode labels whatever the agent says; report mode waits for the agent like delete.
    expect(fresh.modes.label.action).to.equal("label");
    expect(fresh.modes.report.hold?.reason).to.equal("cni_agent_not_ready");
  });

  it("a pod outside run's scope is explained as unwatched; a pod that does not exist exits 1 naming it", async () => {
    await createPodInState(api, { namespace, name: "elsewhere" });
    const outside = await explain("elsewhere", gateOff, "--label-selector=app=nothing-matches");
    expect(outside.scope.watched).to.equal(false);
    expect(outside.verdict.broken).to.equal(true);

    const missing = await runCommand([
      "explain",
      `${namespace}/no-such-pod`,
      `--kubeconfig=${controlPlane().kubeconfigPath}`,
      gateOff,
    ]);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.include(`pod ${namespace}/no-such-pod not found`);
    expect(missing.stdout).to.equal("");
  });
});
