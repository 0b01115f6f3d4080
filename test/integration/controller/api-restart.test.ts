// The API server dies (SIGKILL) and comes back while the controller runs: the controller recovers by itself.
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import type { ControllerProcess } from "../../harness/controller-process.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { startControllerFor } from "./start.js";

describe("controller across an API server restart", () => {
  let controller: ControllerProcess | undefined;

  afterEach(async function () {
    if (this.currentTest?.state === "failed") console.log(controller?.output());
    expect(await controller?.stop()).to.equal(0);
  });

  it("repairs a pod broken after kube-apiserver was killed and restarted", async function () {
    this.timeout(120_000);
    const api = controlPlane().kubeConfig().makeApiClient(CoreV1Api);
    const namespace = await createTestNamespace(api);
    controller = await startControllerFor(namespace);

    await controlPlane().restartApiServer("SIGKILL");
    await createPodInState(api, { namespace, name: "after-restart" });

    await waitFor("the delete", () => controllerDeletes(controlPlane().auditLogPath, namespace).length === 1, {
      timeoutMs: 60_000,
    });
    expect(await controller.metric("cni_repair_watch_restarts_total", { reason: "error" })).to.be.greaterThan(0);
    expect((await controller.get("/healthz")).status).to.equal(200);
  });
});
