// The controller "in-cluster": a ServiceAccount token from TokenRequest and the least privilege it needs.
import { CoreV1Api, type V1PolicyRule } from "@kubernetes/client-node";
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { ControllerProcess } from "../../harness/controller-process.js";
import { type InCluster, inClusterIdentity } from "../../harness/in-cluster.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { PLAIN } from "./start.js";

const READ_PODS: V1PolicyRule = { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] };
const WRITE_EVENTS: V1PolicyRule = { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create"] };

describe("controller in-cluster with a service-account token", () => {
  let api: CoreV1Api;
  let namespace: string;
  let identity: InCluster | undefined;
  let controller: ControllerProcess | undefined;

  beforeEach(async () => {
    api = controlPlane().kubeConfig().makeApiClient(CoreV1Api);
    namespace = await createTestNamespace(api);
  });

  afterEach(async function () {
    if (this.currentTest?.state === "failed") console.log(controller?.output());
    expect(await controller?.stop()).to.equal(0);
    identity?.cleanup();
  });

  const start = async (rules: V1PolicyRule[]) => {
    identity = await inClusterIdentity(controlPlane(), namespace, "cni-repair", rules);
    controller = await ControllerProcess.start({
      args: [`--field-selector=metadata.namespace=${namespace}`, ...PLAIN],
      env: identity.env,
    });
    return controller;
  };

  it("repairs pods with a minimal ClusterRole", async () => {
    const running = await start([READ_PODS, { apiGroups: [""], resources: ["pods"], verbs: ["delete"] }, WRITE_EVENTS]);
    expect(running.logsWith("connected")[0]?.identity).to.equal(`system:serviceaccount:${namespace}:cni-repair`);
    await createPodInState(api, { namespace, name: "broken" });
    await waitFor("the delete", () => controllerDeletes(controlPlane().auditLogPath, namespace).length === 1);
    const [request] = controllerDeletes(controlPlane().auditLogPath, namespace);
    expect(request?.responseStatus?.code).to.equal(200);
    expect(request?.user?.username).to.equal(`system:serviceaccount:${namespace}:cni-repair`);
  });

  it("without delete permission: results are fail with a clear 403 in the log, and it keeps running", async () => {
    const running = await start([READ_PODS, WRITE_EVENTS]);
    await createPodInState(api, { namespace, name: "broken" });

    await waitFor(
      "a failed repair",
      async () => (await running.metric("cni_repair_pods_repaired_total", { type: "delete", result: "fail" })) >= 1,
    );
    const [failure] = running.logsWith("repair failed", { pod: "broken" });
    expect(failure?.detail)
      .to.be.a("string")
      .and.match(/403 Forbidden/)
      .and.match(/cannot delete resource "pods"/);
    expect((await running.get("/healthz")).status).to.equal(200);
    expect((await api.readNamespacedPod({ namespace, name: "broken" })).metadata?.deletionTimestamp).to.equal(
      undefined,
    );
  });
});
