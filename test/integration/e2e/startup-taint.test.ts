// End to end on a whole cluster (kube-apiserver, controller-manager, scheduler, kwok nodes): prevention and repair
// side by side. Two node pools scale up while a Deployment waits for each; both nodes' CNI agents turn Ready 20 s
// after they register. node-d registers with Istio's startup taint (kubelet --register-with-taints) and
// cni-repair manages it: no pod is bound there before the taint goes, the taint goes within --cni-agent-min-ready
// + 2 s of the agent turning Ready, and no pod breaks. node-e registers without it (prevention off for that
// pool): its pods land at once, break, and are repaired. The audit log is the judge of both.
import { AppsV1Api, type CoreV1Api, type V1Taint } from "@kubernetes/client-node";
import { expect } from "chai";
import { nodeWrites, podBindings, podRequests, receivedAtMs } from "../../harness/audit-log.js";
import { agentName } from "../../harness/cni-agents.js";
import type { ControllerProcess } from "../../harness/controller-process.js";
import type { E2eCluster } from "../../harness/e2e-cluster.js";
import { startRepair } from "../../harness/e2e-controller.js";
import { e2eSuite } from "../../harness/e2e-suite.js";
import { judgeWave } from "../../harness/repair-audit.js";
import { waitFor } from "../../harness/wait.js";
import { appPods, createDeployment } from "../../harness/workloads.js";

const ISTIO_TAINT: V1Taint = { key: "cni.istio.io/not-ready", effect: "NoSchedule" };
/** From registration to the agent turning Ready, as the scenario has it. */
const AGENT_START_MS = 20_000;
const MIN_READY_MS = 2_000;
const REPLICAS = 4;

describe("e2e: startup taint prevention beside repair", function () {
  this.timeout(30 * 60_000);
  const suite = e2eSuite();
  let cluster: E2eCluster;
  let controller: ControllerProcess;

  before(() => {
    cluster = suite.cluster;
  });

  it("a tainted new node gets no pod before its agent is Ready and none breaks; an untainted one breaks and is repaired", async () => {
    const namespace = await cluster.createNamespace("prevent");
    const agentNamespace = await cluster.createNamespace("cni");
    await cluster.createCniAgents(agentNamespace, []);
    controller = suite.track(
      await startRepair(cluster.plane.kubeconfigPath, { namespace, agentNamespace }, [
        "--startup-taint=bootstrap-only",
      ]),
    );
    const metric = (name: string, labels: Record<string, string>) => controller.metric(name, labels);

    // The new pools: their agents (DaemonSet pods) are there at once, not Ready yet.
    await cluster.createCniAgents(agentNamespace, ["node-d", "node-e"], ["node-d", "node-e"]);
    await cluster.addNode("node-d", { taints: [ISTIO_TAINT] });
    await cluster.addNode("node-e");
    const registeredAt = Date.now();
    const apps = cluster.plane.kubeConfig().makeApiClient(AppsV1Api);
    await createDeployment(apps, namespace, "pool-d", REPLICAS, "node-d");
    await createDeployment(apps, namespace, "pool-e", REPLICAS, "node-e");

    // Meanwhile node-e's pods land and break; node-d's wait, Pending, and the controller says why.
    await waitFor("node-e's pods to break", () => brokenOn("node-e", namespace).length >= REPLICAS || undefined, {
      timeoutMs: AGENT_START_MS + 10_000,
    });
    await waitFor(
      "the controller to hold node-d's taint for its agent",
      async () => (await metric("cni_repair_startup_taint_held_nodes", { reason: "agent_not_ready" })) === 1,
      { timeoutMs: 10_000 },
    );
    expect(await metric("cni_repair_startup_taint_nodes", { key: ISTIO_TAINT.key ?? "" })).to.equal(1);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, registeredAt + AGENT_START_MS - Date.now())));
    expect(await taintKeys(cluster.api, "node-d")).to.deep.equal([ISTIO_TAINT.key]);

    await cluster.setCniAgentReady(agentNamespace, "node-d");
    await cluster.setCniAgentReady(agentNamespace, "node-e");
    for (const app of ["pool-d", "pool-e"]) {
      await waitFor(
        `all ${REPLICAS} ${app} replicas healthy`,
        async () => {
          const { pods, healthy } = await appPods(cluster.api, namespace, app);
          return pods.length === REPLICAS && healthy === REPLICAS;
        },
        { timeoutMs: 60_000 },
      );
    }

    // The audit log: when the agent turned Ready, when our PATCH took the taint off, when each pod was bound.
    const audit = cluster.plane.auditLogPath;
    const agentReadyAt = lastStatusWrite(audit, agentNamespace, agentName("istio", "node-d"));
    const removals = nodeWrites(audit, "node-d").filter(
      (e) => e.userAgent?.startsWith("cni-repair/") && e.responseStatus?.code === 200,
    );
    expect(removals, "one PATCH of node-d by cni-repair").to.have.length(1);
    const removedAt = removals[0] ? receivedAtMs(removals[0]) : Number.NaN;
    expect(removedAt - agentReadyAt, "taint removed within --cni-agent-min-ready + 2 s").to.be.within(
      MIN_READY_MS - 1_000,
      MIN_READY_MS + 2_000,
    );
    const bindings = podBindings(audit, namespace);
    const onD = bindings.filter((b) => b.node === "node-d");
    const onE = bindings.filter((b) => b.node === "node-e");
    const earlyD = onD.filter((b) => b.atMs < removedAt);
    const earlyE = onE.filter((b) => b.atMs < agentReadyAt);
    const brokenD = brokenOn("node-d", namespace);
    const brokenE = brokenOn("node-e", namespace);
    const repairE = judgeWave(audit, namespace, brokenE);
    console.log(
      `      prevention on (node-d): ${earlyD.length} pods bound before the taint was removed (${removedAt - agentReadyAt} ms after the agent turned Ready), ${brokenD.length} broken, ${onD.length} bound after\n` +
        `      prevention off (node-e): ${earlyE.length} pods bound before the agent was Ready, ${brokenE.length} broken, ${repairE.deletes.filter((d) => d.code === 200).length} repaired by delete`,
    );
    expect(earlyD, "pods bound to node-d before the taint was removed").to.deep.equal([]);
    expect(onD.length, "node-d's pods landed once it was untainted").to.equal(REPLICAS);
    expect(brokenD, "pods broken on node-d").to.deep.equal([]);
    expect(earlyE.length, "node-e's pods landed early").to.equal(REPLICAS);
    expect(brokenE.length, "and broke").to.be.at.least(REPLICAS);
    expect(
      repairE.unrepaired.map((p) => p.name),
      "node-e's broken pods repaired",
    ).to.deep.equal([]);
    expect(repairE.wrong).to.deep.equal([]);

    // Only the taint changed: the PATCH tested the version and the list judged and set it without our key, nothing else.
    const ops = removals[0]?.requestObject as unknown as { op: string; path: string }[];
    expect(ops.map((op) => `${op.op} ${op.path}`)).to.deep.equal([
      "test /metadata/resourceVersion",
      "test /spec/taints",
      "remove /spec/taints",
    ]);
    expect(await taintKeys(cluster.api, "node-d")).to.deep.equal([]);
    expect(await taintKeys(cluster.api, "node-e")).to.deep.equal([]);

    const key = ISTIO_TAINT.key ?? "";
    expect(
      await metric("cni_repair_startup_taint_changes_total", { key, action: "remove", result: "success" }),
    ).to.equal(1);
    expect(await metric("cni_repair_startup_taint_changes_total", { key, action: "add", result: "success" })).to.equal(
      0,
    );
    expect(await metric("cni_repair_startup_taint_removal_seconds_count", { since: "agent_ready" })).to.equal(1);
    expect(await metric("cni_repair_startup_taint_removal_seconds_count", { since: "node_created" })).to.equal(1);
    expect(await metric("cni_repair_startup_taint_nodes", { key })).to.equal(0);
    const { events } = await waitFor("the StartupTaintRemoved Event on node-d", async () => {
      const list = await cluster.api.listNamespacedEvent({ namespace: "default" });
      const found = list.items.filter((e) => e.involvedObject.kind === "Node" && e.reason?.startsWith("StartupTaint"));
      return found.length > 0 && { events: found };
    });
    expect(events.map((e) => `${e.involvedObject.name}:${e.reason}`)).to.deep.equal(["node-d:StartupTaintRemoved"]);
    cluster.assertComponentsRunning();
  });

  const brokenOn = (node: string, namespace: string) => cluster.cni.brokenIn(namespace).filter((p) => p.node === node);
});

async function taintKeys(api: CoreV1Api, name: string): Promise<string[]> {
  return ((await api.readNode({ name })).spec?.taints ?? []).map((taint) => taint.key);
}

/** When the agent pod's status was last written (it turned Ready), by the API server's clock. */
function lastStatusWrite(auditLogPath: string, namespace: string, pod: string): number {
  const writes = podRequests(auditLogPath, namespace).filter(
    (e) => e.objectRef?.name === pod && e.objectRef.subresource === "status" && e.verb === "patch",
  );
  const last = writes.at(-1);
  if (!last) throw new Error(`no status write of ${namespace}/${pod} in the audit log`);
  return Date.parse(last.stageTimestamp);
}
