// Where the Lease lives without --leader-election-namespace: where kubectl would work. Out of cluster the kubeconfig
// context's namespace, in cluster the service account's; with the shipped RBAC (the cluster overlay's ClusterRoles
// and its leader-election Role) bound in that namespace, `run` elects itself there without extra flags.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  type KubernetesObject,
  RbacAuthorizationV1Api,
  type V1ClusterRoleBinding,
  type V1Role,
  type V1RoleBinding,
} from "@kubernetes/client-node";
import { expect } from "chai";
import { ControllerProcess } from "../../harness/controller-process.js";
import { INSTALL, objectsOfKind, renderOverlay } from "../../harness/overlays.js";
import { inClusterAs, serviceAccountToken } from "../../harness/service-account-files.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";

const SERVICE_ACCOUNT = INSTALL.serviceAccount;

/** The cluster overlay's RBAC, granted to `namespace`'s cni-repair ServiceAccount, the Role in that namespace. */
async function bindShippedRbac(namespace: string): Promise<void> {
  const admin = controlPlane().kubeConfig();
  const core = admin.makeApiClient(CoreV1Api);
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: SERVICE_ACCOUNT } } });
  const rendered = await renderOverlay("cluster");
  const subjects = [{ kind: "ServiceAccount", name: SERVICE_ACCOUNT, namespace }];
  const renamed = <T extends KubernetesObject>(object: T): T => ({
    ...object,
    metadata: { name: `${object.metadata?.name}-${namespace}` },
  });
  for (const role of objectsOfKind<KubernetesObject>(rendered, "ClusterRole")) {
    await rbac.createClusterRole({ body: renamed(role) as never });
  }
  for (const binding of objectsOfKind<V1ClusterRoleBinding>(rendered, "ClusterRoleBinding")) {
    const roleRef = { ...binding.roleRef, name: `${binding.roleRef.name}-${namespace}` };
    await rbac.createClusterRoleBinding({ body: { ...renamed(binding), roleRef, subjects } });
  }
  for (const role of objectsOfKind<V1Role>(rendered, "Role")) {
    await rbac.createNamespacedRole({ namespace, body: { ...role, metadata: { name: role.metadata?.name ?? "" } } });
  }
  for (const binding of objectsOfKind<V1RoleBinding>(rendered, "RoleBinding")) {
    const body = { ...binding, metadata: { name: binding.metadata?.name ?? "" }, subjects };
    await rbac.createNamespacedRoleBinding({ namespace, body });
  }
  // The authorizer learns of new bindings from an informer: wait until it lets the account create the Lease.
  const authorization = admin.makeApiClient(AuthorizationV1Api);
  const user = `system:serviceaccount:${namespace}:${SERVICE_ACCOUNT}`;
  const resourceAttributes = { namespace, verb: "create", group: "coordination.k8s.io", resource: "leases" };
  await waitFor("the leader-election RoleBinding to take effect", async () => {
    const review = await authorization.createSubjectAccessReview({ body: { spec: { user, resourceAttributes } } });
    return review.status?.allowed === true;
  });
}

async function leaseHolder(namespace: string): Promise<string | undefined> {
  const coordination = controlPlane().kubeConfig().makeApiClient(CoordinationV1Api);
  const leases = await coordination.listNamespacedLease({ namespace });
  return leases.items.find((lease) => lease.metadata?.name === "cni-repair")?.spec?.holderIdentity;
}

describe("the Lease's namespace by default", () => {
  const started: ControllerProcess[] = [];
  const cleanups: (() => void)[] = [];

  afterEach(async function () {
    if (this.currentTest?.state === "failed") for (const controller of started) console.log(controller.output());
    for (const controller of started.splice(0)) expect(await controller.stop(), "controller exit code").to.equal(0);
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  const run = async (namespace: string, args: string[], env: Record<string, string> = {}) => {
    const controller = await ControllerProcess.start({
      args: [...args, `--field-selector=metadata.namespace=${namespace}`, "--cni-agent-gate=off"],
      env,
    });
    started.push(controller);
    await waitFor("the Lease to be taken", async () => (await leaseHolder(namespace)) !== undefined);
    expect(await leaseHolder("default"), "a Lease in default").to.equal(undefined);
    await waitFor("the leader metric", async () => (await controller.metric("cni_repair_leader")) === 1);
  };

  it("out of cluster: the kubeconfig context's namespace (ops)", async () => {
    const namespace = "ops";
    await bindShippedRbac(namespace);
    const token = await serviceAccountToken(controlPlane(), namespace, SERVICE_ACCOUNT);
    const doc = JSON.parse(controlPlane().kubeconfigYaml(token, SERVICE_ACCOUNT)) as {
      contexts: { context: Record<string, string> }[];
    };
    for (const { context } of doc.contexts) context.namespace = namespace;
    const kubeconfig = join(controlPlane().dir, "ops-context.kubeconfig");
    writeFileSync(kubeconfig, JSON.stringify(doc), { mode: 0o600 });
    await run(namespace, [`--kubeconfig=${kubeconfig}`]);
  });

  it("in cluster: the service account's namespace", async () => {
    const namespace = "ops-in-cluster";
    await bindShippedRbac(namespace);
    const identity = await inClusterAs(controlPlane(), namespace, SERVICE_ACCOUNT);
    cleanups.push(identity.cleanup);
    await run(namespace, [], identity.env);
  });
});
