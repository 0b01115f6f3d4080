// Sets up what a pod would see in-cluster: a ServiceAccount token (TokenRequest), the CA, the env vars.
import { AuthorizationV1Api, CoreV1Api, RbacAuthorizationV1Api, type V1PolicyRule } from "@kubernetes/client-node";
import type { ControlPlane } from "./control-plane.js";
import type { InCluster } from "./service-account-files.js";
import { inClusterAs } from "./service-account-files.js";
import { waitFor } from "./wait.js";

export type { InCluster };

/** A ServiceAccount bound to a ClusterRole with exactly these rules, and its token laid out as in a pod. */
export async function inClusterIdentity(
  plane: ControlPlane,
  namespace: string,
  name: string,
  rules: V1PolicyRule[],
): Promise<InCluster> {
  const admin = plane.kubeConfig();
  const core = admin.makeApiClient(CoreV1Api);
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  await rbac.createClusterRole({ body: { metadata: { name: `${namespace}-${name}` }, rules } });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: `${namespace}-${name}` },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: `${namespace}-${name}` },
      subjects: [{ kind: "ServiceAccount", name, namespace }],
    },
  });
  // The authorizer learns of new bindings from an informer: wait until it allows the first rule.
  const user = `system:serviceaccount:${namespace}:${name}`;
  const first = rules[0];
  if (first) {
    const authorization = admin.makeApiClient(AuthorizationV1Api);
    await waitFor("the ClusterRoleBinding to take effect", async () => {
      const review = await authorization.createSubjectAccessReview({
        body: {
          spec: {
            user,
            groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"],
            resourceAttributes: {
              verb: first.verbs[0] ?? "get",
              group: first.apiGroups?.[0] ?? "",
              resource: first.resources?.[0] ?? "",
            },
          },
        },
      });
      return review.status?.allowed === true;
    });
  }
  return await inClusterAs(plane, namespace, name);
}
