// A repair wave for the fault tests: a Deployment whose every pod started while all CNI agents were down (all
// broken, all held), then the agents turn Ready and cni-repair deletes them one by one at a set pace, so a
// fault can strike in the middle. Afterwards the audit log says whether the wave went right.
import { AppsV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { podRequests } from "../../harness/audit-log.js";
import type { ControllerProcess } from "../../harness/controller-process.js";
import type { E2eCluster } from "../../harness/e2e-cluster.js";
import { type RepairScope, repairArgs } from "../../harness/e2e-controller.js";
import {
  deleteRecords,
  expectEachBrokenPodDeletedOnce,
  judgeWave,
  slowestRepair,
  type WaveReport,
} from "../../harness/repair-audit.js";
import { waitFor } from "../../harness/wait.js";
import { appPods, createDeployment } from "../../harness/workloads.js";

export const WAVE_APP = "wave";
export const WAVE_SIZE = 12;

/**
 * One deletion a second after a burst of one: a 12-pod wave takes about 12 s, room for a fault mid-way. The wave's
 * pods broke in an agent outage: the outage pace is theirs.
 */
export const WAVE_PACE = [
  "--max-deletions-per-minute=60",
  "--max-outage-deletions-per-minute=60",
  "--deletion-burst=1",
] as const;

/** The controller flags for the wave: as in the e2e scenarios, but paced. */
export function waveArgs(kubeconfigPath: string, scope: RepairScope, extra: readonly string[] = []): string[] {
  return repairArgs(kubeconfigPath, scope, [...WAVE_PACE, ...extra]);
}

/** Namespaces, agents down on every node, and the broken Deployment (the controller is started by the test). */
export async function prepareWave(cluster: E2eCluster): Promise<RepairScope> {
  const scope = {
    namespace: await cluster.createNamespace("wave"),
    agentNamespace: await cluster.createNamespace("cni"),
  };
  await cluster.createCniAgents(scope.agentNamespace, cluster.nodes);
  await createDeployment(cluster.plane.kubeConfig().makeApiClient(AppsV1Api), scope.namespace, WAVE_APP, WAVE_SIZE);
  await waitFor(`all ${WAVE_SIZE} pods broken`, () => cluster.cni.brokenIn(scope.namespace).length === WAVE_SIZE, {
    timeoutMs: 60_000,
  });
  return scope;
}

/** Waits until every replica is held by the gate in the controller(s) given. */
export async function expectAllHeld(controller: ControllerProcess): Promise<void> {
  await waitFor(
    "every broken pod held for its agent",
    async () => (await controller.metric("cni_repair_pods_held", { reason: "cni_agent_not_ready" })) === WAVE_SIZE,
    { timeoutMs: 30_000 },
  );
}

/** Every agent turns Ready: the wave begins (after --cni-agent-min-ready). Returns when it happened. */
export async function startWave(cluster: E2eCluster, scope: RepairScope): Promise<number> {
  const at = Date.now();
  for (const node of cluster.nodes) await cluster.setCniAgentReady(scope.agentNamespace, node);
  return at;
}

/** Resolves once this many of the wave's DELETEs have taken effect. */
export async function deletesDone(cluster: E2eCluster, scope: RepairScope, count: number): Promise<void> {
  await waitFor(
    `${count} deletions of the wave`,
    () => deleteRecords(cluster.plane.auditLogPath, scope.namespace).filter((d) => d.code === 200).length >= count,
    { timeoutMs: 30_000, intervalMs: 100 },
  );
}

/**
 * Waits for the wave to finish (every broken pod deleted, every replica healthy) within `boundMs` of its start,
 * then checks the audit log: no wrong DELETE, no UID deleted twice, every broken pod repaired.
 */
export async function expectWaveCompleted(
  cluster: E2eCluster,
  scope: RepairScope,
  startedAtMs: number,
  boundMs: number,
): Promise<WaveReport> {
  const broken = cluster.cni.brokenIn(scope.namespace);
  const remaining = boundMs - (Date.now() - startedAtMs);
  await waitFor(
    `every broken pod deleted within ${boundMs} ms of the wave's start`,
    () => {
      const { unrepaired } = judgeWave(cluster.plane.auditLogPath, scope.namespace, broken);
      if (unrepaired.length === 0) return true;
      // Thrown, not false: a timeout then says who else wrote to the pods left (a full CI run once lost one).
      const writes = unrepaired.map(
        (pod) => `${pod.name}: ${podWrites(cluster.plane.auditLogPath, scope.namespace, pod.name)}`,
      );
      throw new Error(`not deleted by cni-repair yet: ${writes.join("; ")}`);
    },
    { timeoutMs: Math.max(remaining, 1_000), intervalMs: 200 },
  );
  await waitFor(
    `all ${WAVE_SIZE} replicas healthy`,
    async () => {
      const { pods, healthy } = await appPods(cluster.api, scope.namespace, WAVE_APP);
      return pods.length === WAVE_SIZE && healthy === WAVE_SIZE;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  const report = judgeWave(cluster.plane.auditLogPath, scope.namespace, broken, startedAtMs);
  expectEachBrokenPodDeletedOnce(report);
  expect(slowestRepair(report)).to.be.below(boundMs);
  // Nothing the simulator gave a working sandbox was touched, and no replacement came up broken.
  expect(cluster.cni.brokenIn(scope.namespace).length).to.equal(WAVE_SIZE);
  expect(cluster.cni.errors, "the CNI simulator's failed writes").to.deep.equal([]);
  cluster.assertComponentsRunning();
  return report;
}

/** Every write the audit log has for one pod, in order: verb, subresource, user, user agent, code. */
function podWrites(auditLogPath: string, namespace: string, name: string): string {
  const writes = podRequests(auditLogPath, namespace).filter(
    (event) => event.objectRef?.name === name && !["get", "list", "watch"].includes(event.verb),
  );
  if (writes.length === 0) return "no writes logged";
  return writes
    .map((event) => {
      const what = event.objectRef?.subresource ? `${event.verb} ${event.objectRef.subresource}` : event.verb;
      const agent = (event.userAgent ?? "").split(" ")[0];
      return `${what} by ${event.user?.username ?? "?"} (${agent}) ${event.responseStatus?.code ?? "?"} at ${event.stageTimestamp}`;
    })
    .join(", ");
}
