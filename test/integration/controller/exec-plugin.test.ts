// Out of cluster with an exec-plugin user (as EKS, GKE and OIDC helpers work): the kubeconfig path loads
// @kubernetes/client-node on demand, runs the plugin for a token, and the controller repairs as that user.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { ADMIN_USER } from "../../harness/control-plane.js";
import { ControllerProcess } from "../../harness/controller-process.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest, PLAIN } from "./start.js";

describe("controller out of cluster with an exec-plugin user", () => {
  const t = controllerTest();
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "cni-repair-exec-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("runs the plugin for its token and repairs as the user the token names", async () => {
    const plane = controlPlane();
    const calls = join(dir, "calls");
    const plugin = join(dir, "token-plugin.sh");
    // Prints an ExecCredential, as a cloud provider's helper would, and counts its calls.
    const credential = JSON.stringify({
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      status: { token: plane.adminToken },
    });
    writeFileSync(plugin, `#!/bin/sh\necho called >> '${calls}'\necho '${credential}'\n`);
    chmodSync(plugin, 0o700);
    const doc = JSON.parse(plane.kubeconfigYaml()) as { users: { name: string; user: Record<string, unknown> }[] };
    for (const user of doc.users) {
      user.user = {
        exec: { apiVersion: "client.authentication.k8s.io/v1", command: plugin, interactiveMode: "Never" },
      };
    }
    const kubeconfig = join(dir, "exec.kubeconfig");
    writeFileSync(kubeconfig, JSON.stringify(doc), { mode: 0o600 });

    const running = t.adopt(
      await ControllerProcess.start({
        args: [`--kubeconfig=${kubeconfig}`, `--field-selector=metadata.namespace=${t.namespace}`, ...PLAIN],
      }),
    );
    expect(running.logsWith("using credentials")[0]?.source).to.equal(`--kubeconfig=${kubeconfig}`);
    expect(running.logsWith("connected")[0]?.identity).to.equal(ADMIN_USER);
    expect(readFileSync(calls, "utf8")).to.include("called");

    await createPodInState(t.api, { namespace: t.namespace, name: "broken" });
    await waitFor("the delete", () => controllerDeletes(plane.auditLogPath, t.namespace).length === 1);
    expect(controllerDeletes(plane.auditLogPath, t.namespace)[0]?.responseStatus?.code).to.equal(200);
  });
});
