// The permission self-check against the real authorizer: a ServiceAccount without `delete` on pods is told so.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CoreV1Api, type V1PolicyRule } from "@kubernetes/client-node";
import { expect } from "chai";
import {
  describeMissing,
  missingPermissions,
  type Permission,
  requiredPermissions,
} from "../../src/kube/access-review.js";
import { KubeConfigCredentials } from "../../src/kube/kubeconfig-credentials.js";
import { KubeTransport } from "../../src/kube/transport.js";
import { type InCluster, inClusterIdentity } from "../harness/in-cluster.js";
import { createTestNamespace } from "../harness/namespaces.js";
import { controlPlane } from "../harness/shared-control-plane.js";
import { waitFor } from "../harness/wait.js";

const FULL_RULES: V1PolicyRule[] = [
  { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch", "delete"] },
  { apiGroups: [""], resources: ["pods/status"], verbs: ["patch"] },
  { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create"] },
  { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] },
];

describe("permission self-check (SelfSubjectAccessReview)", () => {
  let namespace: string;
  let identity: InCluster | undefined;
  let transport: KubeTransport | undefined;

  beforeEach(async () => {
    namespace = await createTestNamespace(controlPlane().kubeConfig().makeApiClient(CoreV1Api));
  });

  afterEach(async () => {
    await transport?.close();
    transport = undefined;
    identity?.cleanup();
    identity = undefined;
  });

  /** A TokenRequest token for a ServiceAccount bound to a ClusterRole with these rules. */
  const serviceAccount = async (rules: V1PolicyRule[]) => {
    identity = await inClusterIdentity(controlPlane(), namespace, "cni-repair", rules);
    const root = identity.env.CNI_REPAIR_IN_CLUSTER_ROOT ?? "";
    const token = readFileSync(join(root, "var/run/secrets/kubernetes.io/serviceaccount/token"), "utf8");
    transport = new KubeTransport(new KubeConfigCredentials(controlPlane().kubeConfig(token, "cni-repair")), {
      userAgent: "cni-repair/test",
    });
    return transport;
  };
  const needed = () =>
    requiredPermissions({ mode: "delete", deleteBarePods: false, electing: true, leaseNamespace: namespace });

  it("finds exactly the missing `delete` on pods and names the rule that grants it", async () => {
    const withoutDelete = FULL_RULES.map((rule) =>
      rule.resources?.includes("pods") ? { ...rule, verbs: ["get", "list", "watch"] } : rule,
    );
    const asController = await serviceAccount(withoutDelete);
    // The authorizer learns of the new binding from an informer: until then everything is denied.
    const { missing } = await waitFor("the ClusterRoleBinding to take effect", async () => {
      const found = await missingPermissions(asController, needed());
      return found.length < needed().length && { missing: found };
    });
    expect(missing).to.deep.equal([{ verb: "delete", group: "", resource: "pods" } satisfies Permission]);
    const message = describeMissing(missing);
    expect(message).to.contain("delete pods (cluster-wide)");
    expect(message).to.contain("ClusterRole");
    expect(message).to.contain('- apiGroups: [""]\n  resources: ["pods"]\n  verbs: ["delete"]');
  });

  it("finds nothing missing with the full rules", async () => {
    const asController = await serviceAccount(FULL_RULES);
    const { missing } = await waitFor("the ClusterRoleBinding to take effect", async () => {
      const found = await missingPermissions(asController, needed());
      return found.length === 0 && { missing: found };
    });
    expect(missing).to.deep.equal([]);
    expect(describeMissing(missing)).to.equal("");
  });
});
