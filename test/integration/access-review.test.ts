// The permission self-check against the real authorizer: a ServiceAccount without `delete` on pods is told so, and
// the rules review the check asks first agrees with the authorizer's own per-permission answers.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CoreV1Api, RbacAuthorizationV1Api, type V1PolicyRule } from "@kubernetes/client-node";
import { expect } from "chai";
import {
  deniedByAccessReviews,
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

  it("the rules review agrees with one access review per permission: wildcards, */status, resourceNames, a grant in one namespace only", async () => {
    const asController = await serviceAccount([
      { apiGroups: [""], resources: ["pods"], verbs: ["*"] },
      { apiGroups: ["*"], resources: ["*/status"], verbs: ["patch"] },
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], resourceNames: ["cni-repair"], verbs: ["get"] },
      { apiGroups: ["apps"], resources: ["daemonsets"], resourceNames: ["istio-cni-node"], verbs: ["list"] },
    ]);
    // Events and ConfigMaps granted in this namespace only (a Role): not cluster-wide.
    const rbac = controlPlane().kubeConfig().makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name: "here-only" },
        rules: [
          { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create"] },
          { apiGroups: [""], resources: ["configmaps"], verbs: ["list"] },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: "here-only" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "here-only" },
        subjects: [{ kind: "ServiceAccount", name: "cni-repair", namespace }],
      },
    });
    const ask = (verb: string, group: string, resource: string, extra: Partial<Permission> = {}): Permission => ({
      verb,
      group,
      resource,
      ...extra,
    });
    const asked: Permission[] = [
      ask("delete", "", "pods"),
      ask("watch", "", "pods", { namespace }),
      ask("patch", "", "pods", { subresource: "status" }),
      ask("patch", "apps", "daemonsets", { subresource: "status" }),
      ask("get", "", "pods", { subresource: "log" }),
      ask("create", "events.k8s.io", "events"),
      ask("create", "events.k8s.io", "events", { namespace }),
      ask("list", "", "configmaps"),
      ask("list", "", "configmaps", { namespace }),
      ask("get", "coordination.k8s.io", "leases", { namespace, name: "cni-repair" }),
      ask("get", "coordination.k8s.io", "leases", { namespace, name: "another" }),
      ask("get", "coordination.k8s.io", "leases", { namespace }),
      ask("list", "apps", "daemonsets", { name: "istio-cni-node" }),
      ask("list", "apps", "daemonsets"),
      ask("patch", "", "nodes"),
    ];
    const denied = [
      asked[4], // pods/log: the rule names pods only
      asked[5], // events everywhere: the Role grants one namespace
      asked[7], // configmaps everywhere: likewise
      asked[10], // another Lease: resourceNames
      asked[11], // any Lease: resourceNames never match a request without a name
      asked[13], // every DaemonSet: likewise
      asked[14],
    ];
    const authorizer = await waitFor("the RoleBinding to take effect", async () => {
      const found = await deniedByAccessReviews(asController, asked);
      return found.length === denied.length && { found };
    });
    expect(authorizer.found, "what the authorizer denies, one review each").to.deep.equal(denied);

    const paths: string[] = [];
    const counting = {
      request: ((...args: Parameters<KubeTransport["request"]>) => {
        paths.push(args[2]);
        return asController.request(...args);
      }) as KubeTransport["request"],
    };
    expect(await missingPermissions(counting, asked), "what the self-check finds missing").to.deep.equal(denied);
    const reviews = (kind: string) => paths.filter((path) => path.endsWith(`/${kind}`)).length;
    expect(reviews("selfsubjectrulesreviews"), "one rules review per namespace asked about").to.equal(2);
    expect(reviews("selfsubjectaccessreviews"), "an access review only for what the rules do not grant").to.equal(
      denied.length,
    );
  });
});
