// Two replicas with leader election: exactly one acts; when the leader is killed the other takes over
// within the lease duration, and no pod UID is ever sent two DELETEs.
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { ControllerProcess } from "../../harness/controller-process.js";
import { FakeKubelet } from "../../harness/fake-kubelet.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";

describe("leader election across two controller processes", () => {
  const replicas: ControllerProcess[] = [];

  afterEach(async function () {
    if (this.currentTest?.state === "failed") for (const replica of replicas) console.log(replica.output());
    for (const replica of replicas.splice(0)) await replica.stop();
  });

  /** A fresh namespace, and the flags of replicas that elect a leader with a Lease in it. */
  const electingReplicas = async () => {
    const api = controlPlane().kubeConfig().makeApiClient(CoreV1Api);
    const namespace = await createTestNamespace(api);
    const args = [
      `--kubeconfig=${controlPlane().kubeconfigPath}`,
      `--field-selector=metadata.namespace=${namespace}`,
      "--cni-agent-gate=off",
      "--leader-elect=true",
      `--leader-election-namespace=${namespace}`,
    ];
    return { api, namespace, args };
  };

  it("one leader acts; after SIGKILL the other acts within the lease duration; no UID deleted twice", async function () {
    this.timeout(90_000);
    const { api, namespace, args: base } = await electingReplicas();
    const args = [...base, "--lease-duration=4s", "--renew-deadline=3s", "--retry-period=1s"];
    replicas.push(await ControllerProcess.start({ args }), await ControllerProcess.start({ args }));
    const leaders = async () => {
      const flags = await Promise.all(replicas.map((replica) => replica.metric("cni_repair_leader")));
      return replicas.filter((_, i) => flags[i] === 1);
    };
    const { leader } = await waitFor("one leader", async () => {
      const [found, ...others] = await leaders();
      return found !== undefined && others.length === 0 && { leader: found };
    });
    const follower = replicas.find((replica) => replica !== leader);
    if (!leader || !follower) throw new Error("expected a leader and a follower");

    await createPodInState(api, { namespace, name: "first" });
    await waitFor("the first delete", () => controllerDeletes(controlPlane().auditLogPath, namespace).length === 1);
    expect(await leader.metric("cni_repair_pods_repaired_total", { type: "delete", result: "success" })).to.equal(1);
    expect(await follower.metric("cni_repair_pods_repaired_total", { type: "delete", result: "success" })).to.equal(0);
    // The follower keeps a warm cache and is ready too.
    expect((await follower.get("/readyz")).status).to.equal(200);
    expect(await follower.metric("cni_repair_cache_pods")).to.equal(1);

    await leader.stop("SIGKILL");
    const killedAt = Date.now();
    await createPodInState(api, { namespace, name: "second" });
    await waitFor("the second delete", () => controllerDeletes(controlPlane().auditLogPath, namespace).length === 2, {
      timeoutMs: 20_000,
    });
    const second = controllerDeletes(controlPlane().auditLogPath, namespace)[1];
    // The worst case, from the timings: the follower polls the Lease every retry period jittered as client-go does
    // (up to 2.2 × 1 s), so it may see the last renewal one poll after the kill and the expiry one poll after the
    // 4 s lease duration it counts from that sight; then one pace interval (1 s at 60 a minute: a new leader starts
    // without a burst, the previous one may have spent it); 1 s for the watch event and the request themselves.
    expect(Date.parse(second?.stageTimestamp ?? "") - killedAt).to.be.below(2_200 + 4_000 + 2_200 + 1_000 + 1_000);
    expect(await follower.metric("cni_repair_leader")).to.equal(1);

    const perUid = new Map<string, number>();
    for (const request of controllerDeletes(controlPlane().auditLogPath, namespace)) {
      const uid = String((request.requestObject?.preconditions as { uid?: string } | undefined)?.uid);
      perUid.set(uid, (perUid.get(uid) ?? 0) + 1);
    }
    expect([...perUid.values()].every((count) => count === 1)).to.equal(true);
  });

  it("SIGTERM releases the Lease: the other replica leads at once, without waiting for it to expire", async function () {
    this.timeout(60_000);
    const { args: base } = await electingReplicas();
    const args = [...base, "--lease-duration=15s"];
    replicas.push(await ControllerProcess.start({ args }));
    await waitFor("the first to lead", async () => (await replicas[0]?.metric("cni_repair_leader")) === 1);
    replicas.push(await ControllerProcess.start({ args }));
    const [first, second] = replicas;
    expect(await first?.stop("SIGTERM")).to.equal(0);
    const stoppedAt = Date.now();
    await waitFor("the second to lead", async () => (await second?.metric("cni_repair_leader")) === 1, {
      timeoutMs: 10_000,
    });
    // Far sooner than the 15 s lease: the released Lease is free at once (one 2 s retry period at most).
    expect(Date.now() - stoppedAt).to.be.below(5_000);
  });

  it("SIGKILL of the leader mid-wave: deletions across both stay within the pace plus one burst per minute", async function () {
    this.timeout(240_000);
    const PER_MINUTE = 20;
    const BURST = 5;
    const PODS = 40;
    const { api, namespace, args: base } = await electingReplicas();
    const kubelet = await FakeKubelet.start(controlPlane().kubeConfig(), namespace);
    try {
      const args = [
        ...base,
        "--lease-duration=4s",
        "--renew-deadline=3s",
        "--retry-period=1s",
        `--max-deletions-per-minute=${PER_MINUTE}`,
        `--deletion-burst=${BURST}`,
        // Every pod of the wave is on one node: this test is about the budget, not the storm breaker.
        "--max-broken-fraction=1",
      ];
      replicas.push(await ControllerProcess.start({ args }), await ControllerProcess.start({ args }));
      await waitFor("one leader", async () => {
        const flags = await Promise.all(replicas.map((replica) => replica.metric("cni_repair_leader")));
        return flags.filter((flag) => flag === 1).length === 1;
      });
      const flags = await Promise.all(replicas.map((replica) => replica.metric("cni_repair_leader")));
      const leader = replicas[flags.indexOf(1)];
      // One owner each: siblings of one owner created after our first delete would look like its replacements.
      for (let i = 0; i < PODS; i++) {
        await createPodInState(api, { namespace, name: `wave-${i}`, owner: { kind: "ReplicaSet", name: `rs-${i}` } });
      }
      const deletes = () =>
        controllerDeletes(controlPlane().auditLogPath, namespace).filter((e) => e.responseStatus?.code === 200);
      // Mid-wave: a few paced deletes are done (the first term starts without a burst too).
      await waitFor("a few deletes", () => deletes().length >= 4, { timeoutMs: 60_000 });
      await leader?.stop("SIGKILL");
      await waitFor("every pod deleted", () => deletes().length === PODS, { timeoutMs: 200_000 });

      const times = deletes()
        .map((e) => Date.parse(e.stageTimestamp))
        .sort((a, b) => a - b);
      // Any minute of the wave, across both leaders: at most the pace plus one burst (the audit log's clock).
      for (const start of times) {
        const inMinute = times.filter((at) => at >= start && at < start + 60_000).length;
        expect(inMinute, `deletes in the minute from ${new Date(start).toISOString()}`).to.be.at.most(
          PER_MINUTE + BURST,
        );
      }
      const uids = controllerDeletes(controlPlane().auditLogPath, namespace).map((e) =>
        String((e.requestObject?.preconditions as { uid?: string } | undefined)?.uid),
      );
      expect(new Set(uids).size).to.equal(uids.length);
    } finally {
      await kubelet.stop();
    }
  });
});
