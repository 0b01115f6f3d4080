// The reflector under watch faults, with a TCP proxy between the controller and the API server:
// a silently stalled watch is restarted, and a resume that gets 410 Gone relists and catches up.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { ControllerProcess } from "../../harness/controller-process.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { TcpProxy } from "../../harness/tcp-proxy.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest, PLAIN } from "./start.js";

describe("controller under watch faults", () => {
  const t = controllerTest();
  let api: CoreV1Api;
  let namespace: string;
  let proxy: TcpProxy;

  beforeEach(async () => {
    ({ api, namespace } = t);
    proxy = await TcpProxy.start(controlPlane().apiServerAddress);
  });

  afterEach(async () => {
    await proxy.close();
  });

  /** A controller whose every API connection goes through the proxy. */
  const startBehindProxy = async (args: string[] = []) => {
    const config = JSON.parse(controlPlane().kubeconfigYaml()) as { clusters: { cluster: { server: string } }[] };
    for (const entry of config.clusters) entry.cluster.server = `https://127.0.0.1:${proxy.port}`;
    const kubeconfig = join(controlPlane().dir, `proxied-${namespace}.kubeconfig`);
    writeFileSync(kubeconfig, JSON.stringify(config));
    return t.adopt(
      await ControllerProcess.start({
        args: [`--kubeconfig=${kubeconfig}`, `--field-selector=metadata.namespace=${namespace}`, ...PLAIN, ...args],
      }),
    );
  };
  const restarts = (reason: string) => t.metric("cni_repair_watch_restarts_total", { reason });

  it("restarts a watch that goes silent for --watch-stall-timeout", async () => {
    await startBehindProxy(["--watch-stall-timeout=2s"]);
    proxy.stallAll();
    await waitFor("the stalled watch to be restarted", async () => (await restarts("stalled")) >= 1, {
      timeoutMs: 10_000,
    });
    // The black-holed connections (idle pooled ones too) die eventually; here at once.
    proxy.cutAll();

    await createPodInState(api, { namespace, name: "after-stall" });
    await waitFor("the delete", () => controllerDeletes(controlPlane().auditLogPath, namespace).length === 1, {
      timeoutMs: 20_000,
    });
  });

  it("relists on 410 Gone and catches up: a pod broken and a pod deleted while it was cut off", async function () {
    this.timeout(120_000);
    await createPodInState(api, { namespace, name: "leaver" }, { validator: { kind: "succeeded" } });
    await startBehindProxy();
    expect(await t.controller.metric("cni_repair_cache_pods")).to.equal(1);

    proxy.refuse();
    proxy.cutAll();
    await api.deleteNamespacedPod({ namespace, name: "leaver", body: { gracePeriodSeconds: 0 } });
    await createPodInState(api, { namespace, name: "missed" });
    // A fresh watch cache and a compacted etcd: the controller's last resourceVersion is gone for good.
    await controlPlane().restartApiServer("SIGKILL");
    await controlPlane().compactEtcd();
    proxy.pass();

    await waitFor("the delete", () => controllerDeletes(controlPlane().auditLogPath, namespace).length === 1, {
      timeoutMs: 60_000,
    });
    expect(controllerDeletes(controlPlane().auditLogPath, namespace)[0]?.objectRef?.name).to.equal("missed");
    expect(await restarts("gone")).to.be.greaterThan(0);
    // "leaver" vanished during the outage: the relist diff removed it from the cache.
    await waitFor(
      "the cache to hold only 'missed'",
      async () => (await t.controller.metric("cni_repair_cache_pods")) === 1,
    );
  });
});
