// `cni-repair scan --repair` as one guarded pass with the CNI agent gate on: it trusts the kubelet's Ready time of an
// agent Ready long before it started (and deletes), holds when that time is in the future or missing, and keeps
// the deletion burst within the pass (the rest are held rate_limit and reported).
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import type { ScanReport } from "../../../src/cli/scan-output.js";
import { controllerDeletes, loggedControllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { agentName, createCniAgent, setCniAgentReady } from "../../harness/cni-agents.js";
import { runCommand } from "../../harness/controller-process.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

/** Kubernetes keeps condition times in whole seconds. */
const secondsFromNow = (seconds: number): Date => new Date(Math.floor(Date.now() / 1000 + seconds) * 1000);

describe("cni-repair scan --repair: one guarded pass behind the CNI agent gate", () => {
  let api: CoreV1Api;
  let namespace: string;

  beforeEach(async () => {
    api = controlPlane().kubeConfig().makeApiClient(CoreV1Api);
    namespace = await createTestNamespace(api);
  });

  const repairPass = async (...args: string[]) => {
    const result = await runCommand([
      "scan",
      "--repair",
      "--mode=delete",
      "-o",
      "json",
      `--kubeconfig=${controlPlane().kubeconfigPath}`,
      `--field-selector=metadata.namespace=${namespace}`,
      `--cni-agent-namespace=${namespace}`,
      // The test's CNI agents are not Istio's: nothing repairs in place (see e2e-controller.ts).
      "--istio-repair=ignore",
      ...args,
    ]);
    return { ...result, report: JSON.parse(result.stdout) as ScanReport };
  };

  it("deletes a broken pod on a node whose agent has been Ready for an hour, with preconditions, and exits 0", async () => {
    await createCniAgent(api, { namespace, mesh: "istio", nodeName: "n1", readySince: secondsFromNow(-3_600) });
    const pod = await createPodInState(api, { namespace, name: "broken", nodeName: "n1" });

    const started = Date.now();
    const { code, stderr, report } = await repairPass();
    expect(code, stderr).to.equal(0);
    // One pass, no waiting out --cni-agent-min-ready (10 s) by watching.
    expect(Date.now() - started).to.be.below(10_000);
    expect(report.pods.map((p) => `${p.name}:${p.result?.type}:${p.result?.result}`)).to.deep.equal([
      "broken:delete:success",
    ]);
    const deletes = await loggedControllerDeletes(controlPlane().auditLogPath, namespace, 1);
    expect(deletes.map((event) => [event.objectRef?.name, event.responseStatus?.code])).to.deep.equal([
      ["broken", 200],
    ]);
    expect(deletes[0]?.requestObject?.preconditions).to.deep.equal({
      uid: pod.metadata?.uid,
      resourceVersion: pod.metadata?.resourceVersion,
    });
  });

  it("deletes nothing when the agent's Ready time is in the future or missing: held cni_agent_not_ready, exit 1", async () => {
    await createCniAgent(api, { namespace, mesh: "istio", nodeName: "n-future", readySince: secondsFromNow(3_600) });
    await createCniAgent(api, { namespace, mesh: "istio", nodeName: "n-untimed", readySince: secondsFromNow(-3_600) });
    await setCniAgentReady(api, { namespace, name: agentName("istio", "n-untimed") }, "no time");
    await createPodInState(api, { namespace, name: "on-future", nodeName: "n-future" });
    await createPodInState(api, { namespace, name: "on-untimed", nodeName: "n-untimed" });

    const { code, stderr, report } = await repairPass();
    expect(code, stderr).to.equal(1);
    expect(report.pods.map((p) => `${p.name}:${p.action}:${p.hold?.reason}`)).to.deep.equal([
      "on-future:hold:cni_agent_not_ready",
      "on-untimed:hold:cni_agent_not_ready",
    ]);
    expect(report.pods[0]?.hold?.detail).to.include("without one, or with one in the future");
    expect(controllerDeletes(controlPlane().auditLogPath, namespace)).to.deep.equal([]);
  });

  it("deletes at most the burst in one pass; the rest are held rate_limit and reported, exit 1", async () => {
    await createCniAgent(api, { namespace, mesh: "istio", nodeName: "n1", readySince: secondsFromNow(-3_600) });
    for (const name of ["a", "b", "c"]) {
      await createPodInState(api, {
        namespace,
        name,
        nodeName: "n1",
        owner: { kind: "ReplicaSet", name: `rs-${name}` },
      });
    }

    const { code, stderr, report } = await repairPass("--deletion-burst=2", "--max-deletions-per-minute=1");
    expect(code, stderr).to.equal(1);
    expect(await loggedControllerDeletes(controlPlane().auditLogPath, namespace, 2)).to.have.length(2);
    const outcomes = report.pods.map((p) => p.result?.result ?? `hold:${p.hold?.reason}`).sort();
    expect(outcomes).to.deep.equal(["hold:rate_limit", "success", "success"]);
  });
});
