// Node-scoped runs side by side with Istio's own repair controller (issue 27): every controller watches one node
// with `params.side.pods` healthy pods, as a DaemonSet instance does. One run of one controller yields:
// start-up (spawn → the server accepting its DELETE of a pod broken before it started), memory after sync, idle
// CPU, CPU per watch event, isolated repair latency (one break every 2 s), burst latency (pods breaking at 5/s),
// memory after that, and DELETE requests per repaired pod. Timings from the API server's audit log; memory and CPU
// from /proc, read the same way for the Go binary and the Node processes.
import { setTimeout as sleep } from "node:timers/promises";
import { messageOf } from "../../src/util/message-of.js";
import { AuditTail, controllerDeleteRequests, type RepairTiming, repairTimings } from "../lib/audit.js";
import { Churn } from "../lib/churn.js";
import { type ControllerKind, startController } from "../lib/controllers.js";
import { startIstioRepair } from "../lib/istio-repair.js";
import { inParallel, podPath } from "../lib/kube-client.js";
import { createRunningPod, ensureNamespace, type PodRef } from "../lib/population.js";
import { cpuSeconds, rssBytes } from "../lib/proc-stats.js";
import { breakVictim, createVictims, removeUndeleted, type Victim, victimKey } from "../lib/victims.js";
import type { WatchedProcess } from "../lib/watched-process.js";
import { type LatencySummary, latencySummary } from "../report/stats.js";
import type { BenchContext } from "./context.js";

export const SIDE_NODE = "node-side-by-side";
const SIDE_NAMESPACE = "bench-side-by-side";
const READY_TIMEOUT_MS = 120_000;
const REPAIR_TIMEOUT_MS = 30_000;
/** The burst's repairs: Istio's client is held to client-go's default 5 requests/s, shared with its Events. */
const BURST_TIMEOUT_MS = 180_000;
const CACHE_SETTLE_MS = 1_000;

/** The i-th healthy pod on the side-by-side node: 10 per app, one namespace of their own. */
export function sidePod(i: number): PodRef {
  const app = `side-app-${Math.floor(i / 10).toString(36)}`;
  return { namespace: SIDE_NAMESPACE, name: `${app}-5c8d7f9b4-${i.toString(36).padStart(4, "0")}`, app, index: i };
}

export async function createSidePods(ctx: BenchContext): Promise<void> {
  await ensureNamespace(ctx.setup, SIDE_NAMESPACE);
  await inParallel(ctx.params.side.pods, ctx.params.concurrency, (i) =>
    createRunningPod(ctx.setup, sidePod(i), SIDE_NODE),
  );
}

/** Removes them again (grace 0), so the cluster-wide runs see only their own population. */
export async function removeSidePods(ctx: BenchContext): Promise<void> {
  await inParallel(ctx.params.side.pods, ctx.params.concurrency, async (i) => {
    const pod = sidePod(i);
    await ctx.setup.tolerant("DELETE", podPath(pod.namespace, pod.name), {
      apiVersion: "v1",
      kind: "DeleteOptions",
      gracePeriodSeconds: 0,
    });
  });
}

export type SideLatency = LatencySummary & {
  readonly victims: number;
  readonly repaired: number;
  /** Each victim's time in the order they were broken (null: not repaired): which break a p99 is. */
  readonly inBreakOrder: (number | null)[];
};

export type SideRun = {
  readonly round: number;
  readonly controller: ControllerKind;
  /** Spawn → the server accepted its DELETE of the pod broken before the spawn. */
  startupMs?: number;
  /** Spawn → its own "synced" signal (cni-repair: /readyz 200). */
  readyMs?: number;
  /** CPU time (all threads) from the spawn to that signal: start-up's cost, less noisy than its duration. */
  readyCpuMs?: number;
  rssAfterSync?: number;
  idleCpuMsPerSecond?: number;
  cpuUsPerEvent?: number;
  events?: number;
  isolated?: SideLatency;
  /** The isolated repairs split where the server received the DELETE: the controller's part, then the server's. */
  isolatedReaction?: SideLatency;
  isolatedServer?: SideLatency;
  burst?: SideLatency;
  rssAfterBurst?: number;
  /** Every controller DELETE of this run's broken pods (404s and repeats included) ÷ pods it deleted. */
  deletesPerRepairedPod?: number;
  error?: string;
};

export async function runSideBySide(ctx: BenchContext, round: number, controller: ControllerKind): Promise<SideRun> {
  const run: SideRun = { round, controller };
  const side = ctx.params.side;
  const victims = async (count: number) =>
    await createVictims(ctx.setup, ctx.batchName(), count, SIDE_NODE, ctx.params.concurrency);
  const preBroken = await victims(1);
  const isolated = await victims(side.isolatedPods);
  const burst = await victims(side.burstPods);
  const all = [...preBroken, ...isolated, ...burst];
  const tail = new AuditTail(ctx.cluster.plane.auditLogPath);
  const churn = new Churn(ctx.churner, side.pods, side.churnRate, sidePod);
  let child: WatchedProcess | undefined;
  try {
    await breakVictim(ctx.breaker, preBroken[0] as Victim);
    const started = await start(ctx, controller);
    child = started.process;
    const pid = child.pid;
    run.readyMs = started.readyMs;
    run.readyCpuMs = cpuSeconds(pid) * 1000;
    await waitForRepairs(ctx, preBroken, REPAIR_TIMEOUT_MS);
    await sleep(side.settleMs);
    run.rssAfterSync = rssBytes(pid);

    await sleep(side.idleDelaySeconds * 1000);
    const idle0 = cpuSeconds(pid);
    const idleStarted = performance.now();
    await sleep(side.idleSeconds * 1000);
    run.idleCpuMsPerSecond = ((cpuSeconds(pid) - idle0) * 1000) / ((performance.now() - idleStarted) / 1000);

    churn.start();
    const cpu0 = cpuSeconds(pid);
    await sleep((side.cpuEvents / side.churnRate) * 1000);
    const cpu = cpuSeconds(pid) - cpu0;
    run.events = churn.counts.ok;
    run.cpuUsPerEvent = (cpu / run.events) * 1e6;
    await churn.stop();

    await sleep(CACHE_SETTLE_MS);
    for (const victim of isolated) {
      await breakVictim(ctx.breaker, victim);
      await sleep(side.isolatedGapMs);
    }
    await waitForRepairs(ctx, isolated, REPAIR_TIMEOUT_MS);
    await Promise.all(
      burst.map(async (victim, k) => {
        await sleep((k * 1000) / side.burstRate);
        await breakVictim(ctx.breaker, victim);
      }),
    );
    await waitForRepairs(ctx, burst, BURST_TIMEOUT_MS);
    await sleep(side.settleMs);
    run.rssAfterBurst = rssBytes(pid);

    const lines = tail.read();
    const timings = repairTimings(lines, all.map(victimKey));
    const deletedAt = (victim: Victim) => timings.find((t) => t.key === victimKey(victim))?.deletedAtMs;
    run.startupMs = (deletedAt(preBroken[0] as Victim) ?? Number.NaN) - child.startedAtWallMs;
    run.isolated = latencyOf(timings, isolated, repairMs);
    run.isolatedReaction = latencyOf(timings, isolated, reactionMs);
    run.isolatedServer = latencyOf(timings, isolated, serverDeleteMs);
    run.burst = latencyOf(timings, burst, repairMs);
    const repaired = timings.filter((t) => t.deletedAtMs !== undefined).length;
    run.deletesPerRepairedPod = controllerDeleteRequests(lines, all.map(victimKey)) / repaired;
  } catch (error) {
    run.error = messageOf(error).split("\n")[0] ?? "";
  } finally {
    await churn.stop();
    await child?.stop();
    await removeUndeleted(ctx.setup, all, ctx.kubelet.deletedAt, ctx.params.concurrency);
  }
  return run;
}

async function start(
  ctx: BenchContext,
  controller: ControllerKind,
): Promise<{ process: WatchedProcess; readyMs: number }> {
  if (controller === "istio") {
    if (!ctx.istioRepair) throw new Error("Istio's repair controller is not built (bench/istio-repair/build.sh)");
    return await startIstioRepair(ctx.istioRepair, ctx.kubeconfig, SIDE_NODE, READY_TIMEOUT_MS);
  }
  // As the DaemonSet installs it (per-node Node flags, --node-name), limits off like every latency run.
  return await startController({
    kind: controller,
    kubeconfig: ctx.kubeconfig,
    inClusterEnv: ctx.inClusterEnv,
    extraArgs: [...ctx.ourFlags.always, ...ctx.ourFlags.limitsOff, `--node-name=${SIDE_NODE}`],
    readyTimeoutMs: READY_TIMEOUT_MS,
    nodeName: SIDE_NODE,
    // Every figure here comes from /proc and the audit log, the same for all three controllers.
    bare: true,
    ...(ctx.candidate && { candidate: ctx.candidate }),
  });
}

/** Waits until the fake kubelet has seen every victim deleted; a controller that misses one fails the run. */
async function waitForRepairs(ctx: BenchContext, victims: readonly Victim[], timeoutMs: number): Promise<void> {
  const keys = victims.map(victimKey);
  const deleted = await ctx.kubelet.waitForDeleted(keys, timeoutMs);
  if (deleted < keys.length)
    throw new Error(`${keys.length - deleted} of ${keys.length} broken pods not deleted within ${timeoutMs} ms`);
  // The server writes a DELETE's audit entry when it has answered it: a moment after the pod is seen going.
  await sleep(300);
}

/** Break answered → DELETE answered: the repair latency. */
const repairMs = (t: RepairTiming) => (t.deletedAtMs === undefined ? undefined : t.deletedAtMs - t.brokenAtMs);
/** Break answered → DELETE received: the watch event's delivery, the controller's work, its request's write. */
const reactionMs = (t: RepairTiming) =>
  t.deleteReceivedMs === undefined ? undefined : t.deleteReceivedMs - t.brokenAtMs;
/** DELETE received → answered: the server's part (its answer's encoding: JSON for cni-repair, protobuf for Istio). */
const serverDeleteMs = (t: RepairTiming) =>
  t.deletedAtMs === undefined || t.deleteReceivedMs === undefined ? undefined : t.deletedAtMs - t.deleteReceivedMs;

function latencyOf(
  timings: readonly RepairTiming[],
  victims: readonly Victim[],
  measure: (timing: RepairTiming) => number | undefined,
): SideLatency {
  const byKey = new Map(timings.map((t) => [t.key, t]));
  const exact = victims.map((victim) => {
    const timing = byKey.get(victimKey(victim));
    return timing === undefined ? undefined : measure(timing);
  });
  const samples = exact.filter((ms) => ms !== undefined);
  const inBreakOrder = exact.map((ms) => (ms === undefined ? null : Math.round(ms * 100) / 100));
  return { victims: victims.length, repaired: samples.length, ...latencySummary(samples), inBreakOrder };
}
