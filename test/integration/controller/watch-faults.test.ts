// The reflector under watch faults, with a TCP proxy between the controller and the API server: a silently
// stalled watch is restarted, a resume that gets 410 Gone relists and catches up, and /healthz tells the truth.
// With --watch-stall-timeout=2s the documented limits are: a silent watch is restarted (with a warning) after 2 s,
// and /healthz fails once nothing at all has come from the API server for 4 s (twice the stall timeout). Dials do
// not count as hearing from it; answers do.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { ControllerProcess } from "../../harness/controller-process.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { TcpProxy } from "../../harness/tcp-proxy.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest, PLAIN } from "./start.js";

const STALL_MS = 2_000;
/** What the docs promise for /healthz: twice --watch-stall-timeout without an answer. */
const UNHEALTHY_AFTER_MS = 2 * STALL_MS;
/** Slack for a loaded machine: probes are polled, reflectors back off, processes get scheduled late. */
const MARGIN_MS = 4_000;

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

  it("restarts a watch that goes silent for --watch-stall-timeout", async function () {
    this.timeout(90_000);
    await startBehindProxy(["--watch-stall-timeout=2s"]);
    proxy.stallAll();
    await waitFor("the stalled watch to be restarted", async () => (await restarts("stalled")) >= 1, {
      timeoutMs: 10_000,
    });
    // The black-holed connections (idle pooled ones too) die eventually; here at once.
    proxy.cutAll();

    await createPodInState(api, { namespace, name: "after-stall" });
    await waitFor("the delete", () => controllerDeletes(controlPlane().auditLogPath, namespace).length === 1, {
      timeoutMs: 45_000,
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

  it("an API server refusing every connection after sync: /healthz 503 within twice the stall timeout, 200 again once it is back", async function () {
    this.timeout(60_000);
    const controller = await startBehindProxy([`--watch-stall-timeout=${STALL_MS / 1000}s`]);
    expect((await controller.get("/healthz")).status).to.equal(200);

    proxy.refuse();
    proxy.cutAll();
    const cutAt = performance.now();
    const failed = await waitFor(
      "/healthz to fail",
      async () => {
        const answer = await controller.get("/healthz");
        return answer.status === 503 ? answer : undefined;
      },
      { timeoutMs: UNHEALTHY_AFTER_MS + MARGIN_MS + 10_000, intervalMs: 100 },
    );
    const tookMs = performance.now() - cutAt;
    expect(tookMs, "time to /healthz 503").to.be.within(UNHEALTHY_AFTER_MS - 500, UNHEALTHY_AFTER_MS + MARGIN_MS);
    expect(failed.body).to.match(/\[-\] api-server failed: last answer \d+ ms ago \(limit 4000 ms\)/);
    expect(failed.body).to.include("[+] event-loop ok").and.include("[+] credentials ok");
    // Re-dialling all along did not count as life.
    expect(await controller.metric("cni_repair_watch_restarts_total", { reason: "error" })).to.be.greaterThan(0);

    proxy.pass();
    await waitFor("/healthz to pass again", async () => (await controller.get("/healthz")).status === 200, {
      timeoutMs: 45_000,
      intervalMs: 200,
    });
  });

  it("a silent stall (connections open, no bytes): the watch is restarted with a warning in time, and a pod broken during the stall is repaired", async function () {
    this.timeout(90_000);
    const controller = await startBehindProxy([`--watch-stall-timeout=${STALL_MS / 1000}s`]);
    proxy.stallAll();
    const stalledAt = Date.now();
    await createPodInState(api, { namespace, name: "broken-during-stall" });

    const warning = await waitFor(
      "the stall warning",
      () => controller.logsWith("watch restarted", { level: "warn", reason: "stalled" })[0],
      { timeoutMs: STALL_MS + MARGIN_MS + 10_000, intervalMs: 100 },
    );
    const warnedAfterMs = Date.parse(String(warning.timestamp)) - stalledAt;
    expect(warnedAfterMs, "time to the stall warning").to.be.within(0, STALL_MS + MARGIN_MS);
    expect(String(warning.error)).to.include(`no byte from the API server for ${STALL_MS} ms`);
    expect(await controller.metric("cni_repair_watch_restarts_total", { reason: "stalled" })).to.be.greaterThan(0);

    // Nothing cuts the black-holed connections: the controller itself must leave them and dial anew.
    await waitFor(
      "the pod broken during the stall to be deleted",
      () => controllerDeletes(controlPlane().auditLogPath, namespace).length === 1,
      { timeoutMs: 45_000, intervalMs: 250 },
    );
    expect(controllerDeletes(controlPlane().auditLogPath, namespace)[0]?.objectRef?.name).to.equal(
      "broken-during-stall",
    );
    await sleep(UNHEALTHY_AFTER_MS);
    expect((await controller.get("/healthz")).status).to.equal(200);
  });
});
