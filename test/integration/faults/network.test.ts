// Faults between the controller and the API server in the middle of a repair wave. A loopback TCP proxy stalls
// every open connection silently, then cuts connections over and over; a TLS-terminating HTTP proxy answers
// 429 with Retry-After, then 500s, for a while. The controller honours Retry-After (the proxy's request log shows
// no retry sooner than asked) and recovers each time: the wave completes, nothing deleted wrongly or twice.
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import { ControllerProcess } from "../../harness/controller-process.js";
import type { E2eCluster } from "../../harness/e2e-cluster.js";
import { kubeconfigVia } from "../../harness/e2e-controller.js";
import { e2eSuite } from "../../harness/e2e-suite.js";
import { HttpFaultProxy, retryAfterReport } from "../../harness/http-fault-proxy.js";
import { TcpProxy } from "../../harness/tcp-proxy.js";
import { waitFor } from "../../harness/wait.js";
import { deletesDone, expectAllHeld, expectWaveCompleted, prepareWave, startWave, waveArgs } from "./wave.js";

describe("faults: the network between controller and API server, mid-wave", function () {
  this.timeout(30 * 60_000);
  const suite = e2eSuite();
  let cluster: E2eCluster;
  let controller: ControllerProcess | undefined;
  let tcp: TcpProxy | undefined;
  let http: HttpFaultProxy | undefined;

  before(() => {
    cluster = suite.cluster;
  });

  it("a silently stalled watch is restarted, and connections cut again and again are re-made", async function () {
    this.timeout(180_000);
    const scope = await prepareWave(cluster);
    tcp = suite.closeAfter(await TcpProxy.start(cluster.plane.apiServerAddress));
    const kubeconfig = kubeconfigVia(cluster.plane, tcp.port, "tcp");
    controller = suite.track(
      await ControllerProcess.start({ args: waveArgs(kubeconfig, scope, ["--watch-stall-timeout=2s"]) }),
    );
    await expectAllHeld(controller);
    const startedAt = await startWave(cluster, scope);
    await deletesDone(cluster, scope, 3);

    tcp.stallAll();
    const stalled = controller;
    await waitFor(
      "the stalled watch to be restarted",
      async () => (await stalled.metric("cni_repair_watch_restarts_total", { reason: "stalled" })) >= 1,
      { timeoutMs: 15_000 },
    );
    // Black-holed connections die eventually (TCP keepalive, request timeouts); here at once, then over and over.
    for (let cut = 0; cut < 6; cut++) {
      tcp.cutAll();
      await sleep(700);
    }

    // 12 s of pacing, a 2 s stall, 4 s of cuts, and the retry back-off of the DELETEs that were cut.
    await expectWaveCompleted(cluster, scope, startedAt, 75_000);
    expect((await controller.get("/healthz")).status).to.equal(200);
  });

  it("429 with Retry-After, then 500s: Retry-After is honoured, and the wave completes", async function () {
    this.timeout(180_000);
    const scope = await prepareWave(cluster);
    http = suite.closeAfter(await HttpFaultProxy.start(cluster.plane.apiServerAddress, cluster.plane.servingCertFiles));
    const kubeconfig = kubeconfigVia(cluster.plane, http.port, "http");
    controller = suite.track(await ControllerProcess.start({ args: waveArgs(kubeconfig, scope) }));
    await expectAllHeld(controller);
    const startedAt = await startWave(cluster, scope);
    await deletesDone(cluster, scope, 3);

    // An overloaded API server: every new request is told to come back in 3 s, for 7 s.
    http.setRule(() => ({ kind: "fail", code: 429, retryAfterSeconds: 3 }));
    await sleep(7_000);
    // Then a broken one: 500s without Retry-After, for 4 s.
    http.setRule(() => ({ kind: "fail", code: 500 }));
    await sleep(4_000);
    http.setRule();

    await expectWaveCompleted(cluster, scope, startedAt, 90_000);
    const throttled = http.log.filter((entry) => entry.status === 429);
    expect(throttled.length, "requests answered 429").to.be.greaterThan(0);
    expect(
      throttled.some((entry) => entry.method === "DELETE"),
      "a DELETE answered 429",
    ).to.equal(true);
    const report = retryAfterReport(http.log);
    expect(report.retries, "requests retried after a Retry-After").to.be.greaterThan(0);
    expect(report.violations).to.deep.equal([]);
    expect(await controller.metric("cni_repair_api_requests_total", { verb: "delete", code: "429" })).to.be.greaterThan(
      0,
    );
    expect((await controller.get("/healthz")).status).to.equal(200);
  });

  it("DELETEs answered 429 while the watch keeps flowing: no pod's DELETE is retried before its Retry-After", async function () {
    this.timeout(180_000);
    const scope = await prepareWave(cluster);
    http = suite.closeAfter(await HttpFaultProxy.start(cluster.plane.apiServerAddress, cluster.plane.servingCertFiles));
    const kubeconfig = kubeconfigVia(cluster.plane, http.port, "http");
    // No pacing: nothing but Retry-After stands between a pod's first DELETE and its next.
    controller = suite.track(
      await ControllerProcess.start({
        args: waveArgs(kubeconfig, scope, ["--max-deletions-per-minute=0", "--max-outage-deletions-per-minute=0"]),
      }),
    );
    await expectAllHeld(controller);
    // Only DELETEs are throttled; the watch goes on delivering each broken validator's restarts (new
    // resourceVersions every 3 s), which re-queue the pods.
    http.setRule((request) =>
      request.method === "DELETE" ? { kind: "fail", code: 429, retryAfterSeconds: 4 } : { kind: "pass" },
    );
    const startedAt = await startWave(cluster, scope);
    await sleep(9_000);
    http.setRule();

    await expectWaveCompleted(cluster, scope, startedAt, 60_000);
    const report = retryAfterReport(http.log.filter((entry) => entry.method === "DELETE"));
    expect(report.retries, "DELETEs retried after a Retry-After").to.be.greaterThan(0);
    expect(report.violations).to.deep.equal([]);
  });
});
