// Proves RBAC is enforced for service-account tokens minted with TokenRequest.
import { CoreV1Api, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { statusOf } from "../harness/api-errors.js";
import { createTestNamespace } from "../harness/namespaces.js";
import { controlPlane } from "../harness/shared-control-plane.js";
import { waitFor } from "../harness/wait.js";

describe("test control plane RBAC", () => {
  it("refuses a service-account token (403) until a Role grants access", async () => {
    const plane = controlPlane();
    const admin = plane.kubeConfig();
    const api = admin.makeApiClient(CoreV1Api);
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    const namespace = await createTestNamespace(api);

    await api.createNamespacedServiceAccount({ namespace, body: { metadata: { name: "reader" } } });
    const request = await api.createNamespacedServiceAccountToken({
      namespace,
      name: "reader",
      body: { spec: { audiences: [], expirationSeconds: 3600 } },
    });
    const token = request.status?.token ?? "";
    expect(token.split(".")).to.have.length(3);

    const asReader = plane.kubeConfig(token, "reader").makeApiClient(CoreV1Api);
    expect(await statusOf(asReader.listNamespacedPod({ namespace }))).to.equal(403);

    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name: "pod-reader" },
        rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["list"] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: "reader-reads-pods" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "pod-reader" },
        subjects: [{ kind: "ServiceAccount", name: "reader", namespace }],
      },
    });
    // The authorizer reads roles from an informer: the grant shows up within moments, not instantly.
    await waitFor(
      "the Role to take effect",
      async () => (await statusOf(asReader.listNamespacedPod({ namespace }))) === 200,
    );
    expect(await statusOf(asReader.listNamespacedPod({ namespace: "default" }))).to.equal(403);
  });
});
