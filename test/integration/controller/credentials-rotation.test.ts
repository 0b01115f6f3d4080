// After startup a 401 makes the controller load its credentials afresh: a rotated service-account token file is
// picked up at once (client-node alone would keep the old token for up to a minute), and credentials that stay
// rejected fail /healthz, so the kubelet restarts the pod instead of leaving it deaf.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CoreV1Api, type V1PolicyRule } from "@kubernetes/client-node";
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { ControllerProcess } from "../../harness/controller-process.js";
import { type InCluster, inClusterIdentity } from "../../harness/in-cluster.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest, PLAIN } from "./start.js";

const RULES: V1PolicyRule[] = [
  { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch", "delete"] },
  { apiGroups: [""], resources: ["pods/status"], verbs: ["patch"] },
  { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create"] },
];
const TOKEN = "var/run/secrets/kubernetes.io/serviceaccount/token";

describe("credentials rejected after startup", () => {
  const t = controllerTest();
  let api: CoreV1Api;
  let namespace: string;
  const identities: InCluster[] = [];

  beforeEach(() => {
    ({ api, namespace } = t);
  });

  afterEach(() => {
    for (const identity of identities.splice(0)) identity.cleanup();
  });

  /** A controller in-cluster as ServiceAccount "first"; its watches restart every 2 s (quiet namespace). */
  const start = async () => {
    const identity = await inClusterIdentity(controlPlane(), namespace, "first", RULES);
    identities.push(identity);
    const controller = t.adopt(
      await ControllerProcess.start({
        args: [`--field-selector=metadata.namespace=${namespace}`, ...PLAIN, "--watch-stall-timeout=2s"],
        env: identity.env,
      }),
    );
    return { controller, tokenFile: join(identity.env.CNI_REPAIR_IN_CLUSTER_ROOT ?? "", TOKEN) };
  };

  /** Deleting the ServiceAccount revokes its tokens: every later request with one is answered 401. */
  const revoke = async (name: string, tokenFile: string) => {
    await api.deleteNamespacedServiceAccount({ namespace, name });
    const revoked = controlPlane().kubeConfig(readFileSync(tokenFile, "utf8"), name).makeApiClient(CoreV1Api);
    await waitFor(`${name}'s token to be rejected`, async () => {
      try {
        await revoked.listNamespacedPod({ namespace });
        return false;
      } catch (error) {
        return (error as { code?: number }).code === 401;
      }
    });
  };

  /** Puts a token of a new, equally entitled ServiceAccount where the controller reads its token. */
  const rotate = async (tokenFile: string) => {
    const second = await inClusterIdentity(controlPlane(), namespace, "second", RULES);
    identities.push(second);
    writeFileSync(tokenFile, readFileSync(join(second.env.CNI_REPAIR_IN_CLUSTER_ROOT ?? "", TOKEN)));
  };

  it("a rotated token file is loaded after the first 401: repairs go on as the new account, /healthz stays 200", async function () {
    this.timeout(90_000);
    const { controller, tokenFile } = await start();
    await revoke("first", tokenFile);
    await rotate(tokenFile);

    await createPodInState(api, { namespace, name: "after-rotation" });
    await waitFor(
      "the delete as the new account",
      () =>
        controllerDeletes(controlPlane().auditLogPath, namespace).find(
          (event) =>
            event.responseStatus?.code === 200 && event.user?.username === `system:serviceaccount:${namespace}:second`,
        ),
      { timeoutMs: 30_000 },
    );
    expect((await controller.get("/healthz")).status).to.equal(200);
  });

  it("credentials rejected also after loading them afresh: /healthz 503 naming the credentials, 200 once they work", async function () {
    this.timeout(90_000);
    const { controller, tokenFile } = await start();
    await revoke("first", tokenFile);

    const failed = await waitFor(
      "/healthz to fail",
      async () => {
        const answer = await controller.get("/healthz");
        return answer.status === 503 ? answer : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(failed.body).to.include("[-] credentials failed: 401 Unauthorized, also after loading them afresh");
    // 401s are answers: the API server is there, it is the credentials that are wrong.
    expect(failed.body).to.include("[+] api-server ok");

    // The next request loads the new token (the reflector's back-off is at most 30 s by now).
    await rotate(tokenFile);
    await waitFor("/healthz to pass again", async () => (await controller.get("/healthz")).status === 200, {
      timeoutMs: 45_000,
      intervalMs: 200,
    });
  });
});
