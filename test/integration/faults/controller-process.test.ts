// Faults of the controller process itself in the middle of a repair wave: SIGKILL and a restart (its memory of
// what it deleted is gone: preconditions and the pods' own state must keep it from deleting anything twice);
// SIGTERM while deletions are in flight (they finish, the Lease is released, exit 0); and the leader of two
// replicas killed under load (the other takes over and finishes the wave).
import { CoordinationV1Api, CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { ControllerProcess } from "../../harness/controller-process.js";
import type { E2eCluster } from "../../harness/e2e-cluster.js";
import { kubeconfigVia } from "../../harness/e2e-controller.js";
import { e2eSuite } from "../../harness/e2e-suite.js";
import { HttpFaultProxy } from "../../harness/http-fault-proxy.js";
import { waitFor } from "../../harness/wait.js";
import {
  deletesDone,
  expectAllHeld,
  expectWaveCompleted,
  prepareWave,
  startWave,
  WAVE_SIZE,
  waveArgs,
} from "./wave.js";

const WAVE_BOUND_MS = 60_000;

describe("faults: the controller process, mid-wave", function () {
  this.timeout(30 * 60_000);
  const suite = e2eSuite();
  let cluster: E2eCluster;
  let http: HttpFaultProxy | undefined;

  before(() => {
    cluster = suite.cluster;
  });

  // Some of these are killed on purpose; the tests check the exit codes that matter themselves.
  const start = async (args: string[]) => suite.track(await ControllerProcess.start({ args }), { checkExit: false });

  it("SIGKILL mid-wave and a restart: the new process finishes the wave; no UID gets a second DELETE that matters", async function () {
    this.timeout(180_000);
    const scope = await prepareWave(cluster);
    const args = waveArgs(cluster.plane.kubeconfigPath, scope);
    const first = await start(args);
    await expectAllHeld(first);
    const startedAt = await startWave(cluster, scope);
    await deletesDone(cluster, scope, 4);

    await first.stop("SIGKILL");
    const killedAt = Date.now();
    const second = await start(args);

    const report = await expectWaveCompleted(cluster, scope, startedAt, WAVE_BOUND_MS);
    // Between them, each broken pod was deleted exactly once; the restarted process did the rest.
    const byFirst = report.deletes.filter((d) => d.code === 200 && d.atMs < killedAt).length;
    expect(byFirst).to.be.at.least(4);
    const bySecond = await second.metric("cni_repair_pods_repaired_total", { type: "delete", result: "success" });
    expect(bySecond).to.be.within(1, WAVE_SIZE - byFirst);
    expect(await second.stop()).to.equal(0);
  });

  it("SIGTERM with deletions in flight: they finish, the Lease is released, exit 0", async function () {
    this.timeout(180_000);
    const scope = await prepareWave(cluster);
    // Every DELETE takes 3 s to reach the API server, so some are always in flight; Event writes take 3 s, so
    // a backlog of them (holds, then repairs) still waits in the background when the process is told to stop.
    http = suite.closeAfter(await HttpFaultProxy.start(cluster.plane.apiServerAddress, cluster.plane.servingCertFiles));
    http.setRule((request) => ({
      kind: "pass",
      delayMs: request.method === "DELETE" ? 3_000 : request.url.includes("/events") ? 3_000 : 0,
    }));
    const kubeconfig = kubeconfigVia(cluster.plane, http.port, "http");
    const controller = await start(
      waveArgs(kubeconfig, scope, [
        "--leader-elect=true",
        `--leader-election-namespace=${scope.namespace}`,
        "--shutdown-timeout=60s",
      ]),
    );
    await waitFor("leadership", async () => (await controller.metric("cni_repair_leader")) === 1);
    await expectAllHeld(controller);
    const startedAt = await startWave(cluster, scope);
    const proxy = http;
    // Stop once a few repairs are done (their Events queue up behind the slow writes) and another is in flight.
    const deletes = () => proxy.log.filter((entry) => entry.method === "DELETE");
    const { inFlight } = await waitFor(
      "a DELETE in flight after three answered",
      () => {
        const pending = deletes().filter((entry) => entry.answeredAtMs === undefined);
        return deletes().length - pending.length >= 3 && pending.length > 0 && { inFlight: pending };
      },
      { timeoutMs: 30_000 },
    );

    const code = await controller.stop("SIGTERM", 60_000);
    const exitedAt = Date.now();
    expect(code).to.equal(0);
    await waitFor("the last log line", () => controller.logsWith("stopped").length === 1);
    // Each DELETE that was in flight reached the API server and was answered before the process exited: 200,
    // or 409 when the pod's validator restarted meanwhile (its resourceVersion precondition no longer held).
    for (const entry of inFlight) {
      expect(entry.status, entry.url).to.be.oneOf([200, 409]);
      expect(entry.answeredAtMs, entry.url).to.be.below(exitedAt);
    }
    const lines = controller.logs.map((line) => line.msg);
    const outcomes = ["repaired broken pod", "repair skipped"];
    const finished = controller.logs.filter((line) => outcomes.includes(line.msg) && line.action === "delete");
    expect(finished.length).to.be.at.least(inFlight.length);
    // In order: shutting down, the in-flight repairs finish, then the Lease is released, then "stopped".
    const lastOutcome = Math.max(...outcomes.map((msg) => lines.lastIndexOf(msg)));
    expect(lines.indexOf("shutting down")).to.be.below(lastOutcome);
    expect(lastOutcome).to.be.below(lines.indexOf("released the lease"));
    expect(lines.indexOf("released the lease")).to.be.below(lines.indexOf("stopped"));
    const lease = await cluster.plane
      .kubeConfig()
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ namespace: scope.namespace, name: "cni-repair" });
    expect(lease.spec?.holderIdentity ?? "").to.equal("");
    // Events are written in the background: every queued one was still written before the process exited,
    // the Event of each repair among them.
    expect(controller.logsWith("could not record event")).to.deep.equal([]);
    const core = cluster.plane.kubeConfig().makeApiClient(CoreV1Api);
    for (const entry of deletes().filter((e) => e.status === 200)) {
      const [, namespace = "", name = ""] = /\/namespaces\/([^/]+)\/pods\/([^/?]+)/.exec(entry.url) ?? [];
      const events = await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` });
      expect(
        events.items.map((event) => event.reason),
        entry.url,
      ).to.include("BrokenPodDeleted");
    }

    // A successor picks up the rest of the wave.
    await start(waveArgs(cluster.plane.kubeconfigPath, scope));
    await expectWaveCompleted(cluster, scope, startedAt, WAVE_BOUND_MS);
  });

  it("leader failover under load: the leader is SIGKILLed mid-wave, the other replica finishes it", async function () {
    this.timeout(180_000);
    const scope = await prepareWave(cluster);
    const args = waveArgs(cluster.plane.kubeconfigPath, scope, [
      "--leader-elect=true",
      `--leader-election-namespace=${scope.namespace}`,
      "--lease-duration=4s",
      "--renew-deadline=3s",
      "--retry-period=1s",
    ]);
    const replicas = [await start(args), await start(args)];
    const { leader, follower } = await waitFor("one leader", async () => {
      const flags = await Promise.all(replicas.map((replica) => replica.metric("cni_repair_leader")));
      if (flags.filter((flag) => flag === 1).length !== 1) return undefined;
      const [first, second] = flags[0] === 1 ? replicas : [...replicas].reverse();
      return first && second && { leader: first, follower: second };
    });
    if (!leader || !follower) throw new Error("expected a leader and a follower");
    // Both see every broken pod; only the leader holds (acts on) them.
    await expectAllHeld(leader);
    const startedAt = await startWave(cluster, scope);
    await deletesDone(cluster, scope, 4);

    await leader.stop("SIGKILL");
    await waitFor("the follower to lead", async () => (await follower.metric("cni_repair_leader")) === 1, {
      timeoutMs: 10_000,
    });

    await expectWaveCompleted(cluster, scope, startedAt, WAVE_BOUND_MS);
    expect(
      await follower.metric("cni_repair_pods_repaired_total", { type: "delete", result: "success" }),
    ).to.be.at.least(1);
    expect(await follower.stop()).to.equal(0);
  });
});
