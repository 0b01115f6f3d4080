// The API server dies (SIGKILL) and comes back while the controller runs: the controller recovers by itself.
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest } from "./start.js";

describe("controller across an API server restart", () => {
  const t = controllerTest();

  it("repairs a pod broken after kube-apiserver was killed and restarted", async function () {
    this.timeout(120_000);
    await t.start();

    await controlPlane().restartApiServer("SIGKILL");
    await createPodInState(t.api, { namespace: t.namespace, name: "after-restart" });

    await waitFor("the delete", () => controllerDeletes(controlPlane().auditLogPath, t.namespace).length === 1, {
      timeoutMs: 60_000,
    });
    expect(await t.metric("cni_repair_watch_restarts_total", { reason: "error" })).to.be.greaterThan(0);
    expect((await t.controller.get("/healthz")).status).to.equal(200);
  });
});
