// The cost at fleet scale (issue 35): a DaemonSet rollout on N nodes. N per-node instances are started at once
// against the one API server, each configured as the DaemonSet runs it (its node's name, the installed Node flags,
// in cluster, every default but leader election), each node with its pods; then, in the same run, N of Istio's
// repair controllers the same way. Per run: spawn → every instance synced, the API server's CPU and memory during
// the rollout and at rest (its /metrics and /proc), and the instances' total CPU and RSS.
import { setTimeout as sleep } from "node:timers/promises";
import { messageOf } from "../../src/util/message-of.js";
import { type ApiServerMetrics, RssSampler, readApiServerMetrics, requestsBetween } from "../lib/api-server-stats.js";
import { ensureIstioRepairOff } from "../lib/cni-agent.js";
import { type ControllerKind, OUR_SYNCED_LINE, spawnOurs } from "../lib/controllers.js";
import { ISTIO_SYNCED_LINE, spawnIstioRepair } from "../lib/istio-repair.js";
import { inParallel, podsPath } from "../lib/kube-client.js";
import { createRunningPod, ensureNamespace, type PodRef } from "../lib/population.js";
import { cpuSeconds, rssBytes } from "../lib/proc-stats.js";
import type { WatchedProcess } from "../lib/watched-process.js";
import type { BenchContext } from "./context.js";
import { agentsReadyForAnHour } from "./wave.js";

const FLEET_NAMESPACE = "bench-fleet";
const SYNC_TIMEOUT_MS = 300_000;

export const fleetNodes = (count: number): string[] => Array.from({ length: count }, (_, i) => `fleet-node-${i}`);

/** The k-th pod of node `n`: three replicas per app, apps per node, as a node's mix of Deployments. */
const fleetPod = (n: number, k: number, perNode: number): PodRef => {
  const app = `fleet-${n.toString(36)}-app-${Math.floor(k / 3).toString(36)}`;
  return { namespace: FLEET_NAMESPACE, name: `${app}-5c8f7d9b6-${k.toString(36)}`, app, index: n * perNode + k };
};

export type FleetRun = {
  readonly round: number;
  readonly controller: ControllerKind;
  readonly nodes: number;
  readonly podsPerNode: number;
  /** The first spawn → the last instance synced (cni-repair: its "cache synced" line; Istio's: its "synced"). */
  allSyncedMs?: number;
  /** Each instance's spawn → synced, median. */
  syncedP50Ms?: number;
  /** The API server's CPU from the first spawn to the last synced: /proc (all threads) and its /metrics. */
  apiRolloutCpuS?: number;
  apiRolloutMetricsCpuS?: number;
  /** The same from /proc, less what it spends at rest over as long (the rate before the rollout). */
  apiRolloutNetCpuS?: number;
  /** What the rollout asked of it: apiserver_request_total by verb and resource, from the spawn to all synced. */
  rolloutRequests?: Readonly<Record<string, number>>;
  /** Its RSS before the rollout (at rest, no instance) and its peak during it (/proc, sampled every 200 ms). */
  apiRssBeforeBytes?: number;
  apiRssPeakBytes?: number;
  /** At rest with no instance, and at rest with the N instances watching (after a settle): ms of CPU per second. */
  apiIdleBeforeCpuMsPerS?: number;
  apiRestCpuMsPerS?: number;
  /** At rest with the N instances watching: RSS (/proc) and its /metrics' RSS and Go heap in use. */
  apiRestRssBytes?: number;
  apiRestMetrics?: ApiServerMetrics;
  /** The watches it served at rest, minus those before the rollout (the instances' own). */
  watchesOpened?: number;
  /** All N instances: CPU from spawn to the last synced, CPU at rest, RSS at rest (summed). */
  instancesCpuToSyncedS?: number;
  instancesRestCpuMsPerS?: number;
  instancesRssBytes?: number;
  error?: string;
};

/**
 * Each node's pods (healthy, Running) and its CNI agent, Ready for an hour (cni-repair's agent gate is on), with
 * Istio's repair settings beside the agents (its repair off), which cni-repair at its defaults reads and watches.
 */
export async function createFleet(ctx: BenchContext): Promise<void> {
  const { nodes, podsPerNode } = ctx.params.fleet;
  await ensureNamespace(ctx.setup, FLEET_NAMESPACE);
  await agentsReadyForAnHour(ctx, fleetNodes(nodes));
  await ensureIstioRepairOff(ctx.setup);
  const nodeNames = fleetNodes(nodes);
  await inParallel(nodes * podsPerNode, ctx.params.concurrency, async (i) => {
    const n = Math.floor(i / podsPerNode);
    await createRunningPod(ctx.setup, fleetPod(n, i % podsPerNode, podsPerNode), nodeNames[n] as string);
  });
}

/** Removes the fleet's pods at once, so the runs after it do not see them. */
export async function removeFleet(ctx: BenchContext): Promise<void> {
  await ctx.setup.request("DELETE", podsPath(FLEET_NAMESPACE), {
    apiVersion: "v1",
    kind: "DeleteOptions",
    gracePeriodSeconds: 0,
  });
}

export async function runFleetRollout(ctx: BenchContext, round: number, controller: ControllerKind): Promise<FleetRun> {
  const { nodes: count, podsPerNode, settleSeconds, restSeconds } = ctx.params.fleet;
  const run: FleetRun = { round, controller, nodes: count, podsPerNode };
  const pid = ctx.cluster.plane.apiServerPid;
  const children: WatchedProcess[] = [];
  try {
    // The previous run's processes are gone and its watches closed: the API server at rest, alone.
    await sleep(settleSeconds * 1000);
    const before = await readApiServerMetrics(ctx.setup);
    run.apiIdleBeforeCpuMsPerS = await cpuRate([pid], restSeconds);
    run.apiRssBeforeBytes = rssBytes(pid);
    const atSpawn = await readApiServerMetrics(ctx.setup);
    const rss = new RssSampler(pid);
    const apiCpu0 = cpuSeconds(pid);
    const began = performance.now();
    const synced = await Promise.all(
      fleetNodes(count).map(async (node) => {
        const child = spawnOne(ctx, controller, node);
        children.push(child);
        const line = controller === "istio" ? ISTIO_SYNCED_LINE : OUR_SYNCED_LINE;
        await child.waitForLine(
          (text) => (controller === "istio" ? text === line : text.includes(line)),
          SYNC_TIMEOUT_MS,
        );
        return performance.now();
      }),
    );
    const apiCpu1 = cpuSeconds(pid);
    const during = await readApiServerMetrics(ctx.setup);
    run.apiRssPeakBytes = rss.stop();
    run.allSyncedMs = Math.max(...synced) - began;
    const each = children.map((child, i) => (synced[i] as number) - child.startedAt).sort((a, b) => a - b);
    run.syncedP50Ms = each[Math.floor(each.length / 2)] ?? Number.NaN;
    run.apiRolloutCpuS = apiCpu1 - apiCpu0;
    run.apiRolloutMetricsCpuS = during.cpuSeconds - before.cpuSeconds;
    run.apiRolloutNetCpuS = run.apiRolloutCpuS - (run.apiIdleBeforeCpuMsPerS / 1000) * (run.allSyncedMs / 1000);
    run.rolloutRequests = requestsBetween(atSpawn, during);
    run.instancesCpuToSyncedS = children.reduce((sum, child) => sum + cpuSeconds(child.pid), 0);
    // Past the collections of the initial lists' garbage, in the API server and in the instances.
    await sleep(settleSeconds * 1000);
    const pids = children.map((child) => child.pid);
    const [apiRest, instancesRest] = await Promise.all([cpuRate([pid], restSeconds), cpuRate(pids, restSeconds)]);
    run.apiRestCpuMsPerS = apiRest;
    run.instancesRestCpuMsPerS = instancesRest;
    run.apiRestRssBytes = rssBytes(pid);
    run.apiRestMetrics = await readApiServerMetrics(ctx.setup);
    run.watchesOpened = run.apiRestMetrics.watches - before.watches;
    run.instancesRssBytes = pids.reduce((sum, child) => sum + rssBytes(child), 0);
    const exited = children.filter((child) => !child.running).length;
    if (exited > 0) run.error = `${exited} of ${count} instances exited while at rest`;
  } catch (error) {
    run.error = messageOf(error).split("\n")[0] ?? "";
  } finally {
    await Promise.all(children.map(async (child) => await child.stop()));
  }
  return run;
}

/** The bench's usual flags left at their defaults here (ctx.ourFlags.always switches them off elsewhere). */
const AT_DEFAULTS = ["--cni-agent-gate", "--istio-repair"];

/**
 * The instance on `node`, as its DaemonSet runs it: every default but leader election (the agent gate on, Istio's
 * repair settings read and watched).
 */
function spawnOne(ctx: BenchContext, controller: ControllerKind, node: string): WatchedProcess {
  if (controller === "istio") {
    if (!ctx.istioRepair) throw new Error("Istio's repair controller is not built (bench/istio-repair/build.sh)");
    return spawnIstioRepair(ctx.istioRepair, ctx.kubeconfig, node);
  }
  return spawnOurs({
    kind: controller,
    inClusterEnv: ctx.inClusterEnv,
    extraArgs: [
      ...ctx.ourFlags.always.filter((flag) => !AT_DEFAULTS.some((name) => flag.startsWith(`${name}=`))),
      `--node-name=${node}`,
    ],
    nodeName: node,
    // Measured from /proc only, as Istio's: no probe (its --expose-gc would make V8 refuse the code caches).
    bare: true,
    ...(ctx.candidate && { candidate: ctx.candidate }),
  });
}

/** CPU of the processes together over the next `seconds`, in ms per second. */
async function cpuRate(pids: readonly number[], seconds: number): Promise<number> {
  const total = () => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
  const start = total();
  const began = performance.now();
  await sleep(seconds * 1000);
  return ((total() - start) * 1000) / ((performance.now() - began) / 1000);
}
