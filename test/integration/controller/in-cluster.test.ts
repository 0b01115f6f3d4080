// The controller "in-cluster": a ServiceAccount token from TokenRequest and the least privilege it needs.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CoreV1Api, RbacAuthorizationV1Api, type V1PolicyRule } from "@kubernetes/client-node";
import { expect } from "chai";
import { statusOf } from "../../harness/api-errors.js";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { ControllerProcess, runCommand } from "../../harness/controller-process.js";
import { type InCluster, inClusterIdentity } from "../../harness/in-cluster.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest, PLAIN } from "./start.js";

const FORBID_UNNEEDED = fileURLToPath(new URL("../../harness/forbid-unneeded-modules.js", import.meta.url));
const READ_PODS: V1PolicyRule = { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] };
const WRITE_EVENTS: V1PolicyRule = { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create"] };
/** Bare pods are labelled instead of deleted, through pods/status. */
const LABEL_PODS: V1PolicyRule = { apiGroups: [""], resources: ["pods/status"], verbs: ["patch"] };
const DELETE_PODS: V1PolicyRule = { apiGroups: [""], resources: ["pods"], verbs: ["delete"] };

describe("controller in-cluster with a service-account token", () => {
  const t = controllerTest();
  let api: CoreV1Api;
  let namespace: string;
  let identity: InCluster | undefined;

  beforeEach(() => {
    ({ api, namespace } = t);
  });

  afterEach(() => {
    identity?.cleanup();
  });

  const start = async (rules: V1PolicyRule[]) => {
    identity = await inClusterIdentity(controlPlane(), namespace, "cni-repair", rules);
    return t.adopt(
      await ControllerProcess.start({
        args: [`--field-selector=metadata.namespace=${namespace}`, ...PLAIN],
        // In cluster nothing may load @kubernetes/client-node (issue 14: it alone costs ~90 MB), yaml or undici's index.
        env: { ...identity.env, NODE_OPTIONS: `--import=${FORBID_UNNEEDED}` },
      }),
    );
  };

  it("repairs pods with a minimal ClusterRole, without loading @kubernetes/client-node, yaml or undici's index", async () => {
    const running = await start([READ_PODS, DELETE_PODS, LABEL_PODS, WRITE_EVENTS]);
    expect(running.logsWith("connected")[0]?.identity).to.equal(`system:serviceaccount:${namespace}:cni-repair`);
    await createPodInState(api, { namespace, name: "broken" });
    await waitFor("the delete", () => controllerDeletes(controlPlane().auditLogPath, namespace).length === 1);
    const [request] = controllerDeletes(controlPlane().auditLogPath, namespace);
    expect(request?.responseStatus?.code).to.equal(200);
    expect(request?.user?.username).to.equal(`system:serviceaccount:${namespace}:cni-repair`);
  });

  it("refuses to start without delete permission: exit 3 naming delete on pods and the rule that grants it", async () => {
    identity = await inClusterIdentity(controlPlane(), namespace, "cni-repair", [READ_PODS, LABEL_PODS, WRITE_EVENTS]);
    const result = await runCommand(
      ["run", `--field-selector=metadata.namespace=${namespace}`, ...PLAIN],
      identity.env,
    );
    expect(result.code).to.equal(3);
    expect(result.stderr)
      .to.include("delete pods (cluster-wide)")
      .and.match(/verbs: \["delete"\]/);
  });

  it("a failed check stops it before it acts, though its pod list started meanwhile: exit 3, the broken pod not deleted", async () => {
    // Allowed to delete, not to write Events: the check fails, while the list (started before the checks) sees
    // the broken pod. Nothing may act on it.
    identity = await inClusterIdentity(controlPlane(), namespace, "cni-repair", [READ_PODS, DELETE_PODS, LABEL_PODS]);
    await createPodInState(api, { namespace, name: "broken" });
    const result = await runCommand(
      ["run", `--field-selector=metadata.namespace=${namespace}`, ...PLAIN],
      identity.env,
    );
    expect(result.code).to.equal(3);
    expect(result.stderr).to.include("create events");
    expect(controllerDeletes(controlPlane().auditLogPath, namespace)).to.deep.equal([]);
    expect(await api.readNamespacedPod({ namespace, name: "broken" })).to.have.nested.property(
      "metadata.name",
      "broken",
    );
  });

  it("losing delete permission while running: results are fail with a clear 403 in the log, and it keeps running", async () => {
    const running = await start([READ_PODS, DELETE_PODS, LABEL_PODS, WRITE_EVENTS]);
    // Revoke delete at runtime, and wait until the API server's authorizer sees it.
    const rbac = controlPlane().kubeConfig().makeApiClient(RbacAuthorizationV1Api);
    const role = `${namespace}-cni-repair`;
    await rbac.replaceClusterRole({
      name: role,
      body: { metadata: { name: role }, rules: [READ_PODS, LABEL_PODS, WRITE_EVENTS] },
    });
    const probe = plainIdentityApi(identity?.env);
    await waitFor(
      "delete to be forbidden",
      async () =>
        (await statusOf(probe.deleteNamespacedPod({ namespace, name: "nothing", body: { dryRun: ["All"] } }))) === 403,
    );

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

/** A client with the in-cluster identity's token, to see what the authorizer decides for it. */
function plainIdentityApi(env: Record<string, string> | undefined): CoreV1Api {
  const token = readFileSync(
    join(env?.CNI_REPAIR_IN_CLUSTER_ROOT ?? "", "var/run/secrets/kubernetes.io/serviceaccount/token"),
    "utf8",
  );
  return controlPlane().kubeConfig(token, "cni-repair").makeApiClient(CoreV1Api);
}
