// An API server on a port that browsers block (the WHATWG fetch "bad ports": 6000, 6665-6669, 10080, …) works as
// kubectl would have it: `scan` and `run` reach it through a loopback forwarder listening on such a port.
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { ControllerProcess, runCommand } from "../../harness/controller-process.js";
import { kubeconfigVia } from "../../harness/e2e-controller.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { TcpProxy } from "../../harness/tcp-proxy.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest, PLAIN } from "./start.js";

/** Ports on the fetch standard's bad-port list, tried in order until one is free on this machine. */
const BAD_PORTS = [6000, 6665, 6666, 6667, 6668, 6669, 10080] as const;

async function proxyOnBadPort(): Promise<TcpProxy> {
  for (const port of BAD_PORTS) {
    try {
      return await TcpProxy.start(controlPlane().apiServerAddress, port);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    }
  }
  throw new Error(`every bad port is taken on this machine: ${BAD_PORTS.join(", ")}`);
}

describe("an API server on a port fetch would refuse", () => {
  const t = controllerTest();
  let proxy: TcpProxy;
  let kubeconfig: string;

  before(async () => {
    proxy = await proxyOnBadPort();
    kubeconfig = kubeconfigVia(controlPlane(), proxy.port, "bad-port");
  });

  after(async () => {
    await proxy?.close();
  });

  it("scan lists the broken pod through it", async () => {
    await createPodInState(t.api, { namespace: t.namespace, name: "broken", nodeName: "n1" });
    const result = await runCommand([
      "scan",
      `--kubeconfig=${kubeconfig}`,
      `--field-selector=metadata.namespace=${t.namespace}`,
      "--cni-agent-gate=off",
    ]);
    expect(result.code, result.stderr).to.equal(1);
    expect(result.stdout).to.match(new RegExp(`^${t.namespace} +broken +n1 +istio .* delete$`, "m"));
    expect(result.stderr).not.to.include("bad port");
  });

  it("run repairs the broken pod through it", async () => {
    const controller = t.adopt(
      await ControllerProcess.start({
        args: [`--kubeconfig=${kubeconfig}`, `--field-selector=metadata.namespace=${t.namespace}`, ...PLAIN],
      }),
    );
    expect(controller.logsWith("using credentials")[0]?.server).to.equal(`https://127.0.0.1:${proxy.port}`);
    const broken = await createPodInState(t.api, { namespace: t.namespace, name: "broken" });
    await waitFor(
      "the broken pod's delete",
      () => controllerDeletes(controlPlane().auditLogPath, t.namespace).length > 0,
    );
    const [deleted] = controllerDeletes(controlPlane().auditLogPath, t.namespace);
    expect(deleted?.responseStatus?.code).to.equal(200);
    expect(deleted?.objectRef?.name).to.equal(broken.metadata?.name);
    expect(proxy.connections, "connections open through the forwarder").to.be.greaterThan(0);
  });
});
