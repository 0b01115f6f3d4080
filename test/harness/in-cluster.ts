// Sets up what a pod would see in-cluster: a ServiceAccount token (TokenRequest), the CA, the env vars.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuthorizationV1Api, CoreV1Api, RbacAuthorizationV1Api, type V1PolicyRule } from "@kubernetes/client-node";
import type { ControlPlane } from "./control-plane.js";
import { waitFor } from "./wait.js";

export type InCluster = {
  /** Environment for the controller process: as inside a pod, with the service-account files under root. */
  readonly env: Record<string, string>;
  cleanup(): void;
};

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
  const request = await core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const root = mkdtempSync(join(tmpdir(), "cni-repair-in-cluster-"));
  const secrets = join(root, "var/run/secrets/kubernetes.io/serviceaccount");
  mkdirSync(secrets, { recursive: true });
  writeFileSync(join(secrets, "token"), request.status?.token ?? "");
  writeFileSync(join(secrets, "ca.crt"), plane.caPem);
  writeFileSync(join(secrets, "namespace"), namespace);
  const home = join(root, "home");
  mkdirSync(home);
  const url = new URL(plane.server);
  return {
    env: {
      KUBERNETES_SERVICE_HOST: url.hostname,
      KUBERNETES_SERVICE_PORT: url.port,
      CNI_REPAIR_IN_CLUSTER_ROOT: root,
      // An empty home: no ~/.kube/config may take precedence over the in-cluster identity.
      HOME: home,
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}
