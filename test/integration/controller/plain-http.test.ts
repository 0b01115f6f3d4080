// A kubeconfig whose server is http:// (kubectl proxy) works as with kubectl: run syncs and scan --repair deletes
// through it, with no TLS and no credentials of its own (the proxy holds them).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { ControllerProcess, runCommand } from "../../harness/controller-process.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { ownedTempDir } from "../../harness/owned-dirs.js";
import { PlainHttpProxy } from "../../harness/plain-http-proxy.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { PLAIN } from "./start.js";

describe("a kubeconfig with an http:// server (kubectl proxy)", () => {
  let proxy: PlainHttpProxy;
  let kubeconfig: string;

  before(async () => {
    proxy = await PlainHttpProxy.start(controlPlane());
    kubeconfig = join(ownedTempDir("cni-repair-plain-http-"), "kubeconfig");
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "proxy", cluster: { server: proxy.url } }],
        users: [{ name: "nobody", user: {} }],
        contexts: [{ name: "proxy", context: { cluster: "proxy", user: "nobody" } }],
        "current-context": "proxy",
      }),
    );
  });

  after(async () => {
    await proxy.close();
  });

  it("run lists through it and is ready", async () => {
    const controller = await ControllerProcess.start({ args: [`--kubeconfig=${kubeconfig}`, ...PLAIN] });
    try {
      expect(controller.logsWith("using credentials")[0]).to.include({ server: proxy.url });
    } finally {
      expect(await controller.stop("SIGTERM")).to.equal(0);
    }
  });

  it("scan --repair deletes a broken pod through it", async () => {
    const api = controlPlane().kubeConfig().makeApiClient(CoreV1Api);
    const namespace = await createTestNamespace(api);
    await createPodInState(api, { namespace, name: "broken" });
    const result = await runCommand([
      "scan",
      "--repair",
      `--kubeconfig=${kubeconfig}`,
      `--field-selector=metadata.namespace=${namespace}`,
      "--cni-agent-gate=off",
    ]);
    expect(result.code, result.stderr).to.equal(0);
    expect(
      controllerDeletes(controlPlane().auditLogPath, namespace).map((event) => event.objectRef?.name),
    ).to.deep.equal(["broken"]);
  });
});
