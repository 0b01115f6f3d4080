// What the repair-at-the-defaults runs share (issue 27): pods on one or more nodes broken at once, repaired by one
// process per node as each controller runs in a cluster — cni-repair as its DaemonSet installs it, every default
// (agent gate, paces, in-flight caps, storm breaker; only leader election off), or Istio's repair controller, which
// lives in each node's CNI agent. Figures from the API server's audit log; memory and CPU from /proc.
import { setTimeout as sleep } from "node:timers/promises";
import { messageOf } from "../../src/util/message-of.js";
import {
  AuditTail,
  controllerDeleteRequests,
  deletedTwice,
  deletionWindows,
  maxInFlight,
  repairTimings,
} from "../lib/audit.js";
import { ensureCniAgent, setAgentReady } from "../lib/cni-agent.js";
import { type ControllerKind, startController } from "../lib/controllers.js";
import { KUBELET_USER_AGENT } from "../lib/fake-kubelet.js";
import { startIstioRepair } from "../lib/istio-repair.js";
import { inParallel } from "../lib/kube-client.js";
import { cpuSeconds, rssBytes } from "../lib/proc-stats.js";
import { breakVictim, createVictims, removeUndeleted, type Victim, victimKey } from "../lib/victims.js";
import type { WatchedProcess } from "../lib/watched-process.js";
import type { BenchContext } from "./context.js";

const READY_TIMEOUT_MS = 120_000;
const BREAK_CONCURRENCY = 64;
const AN_HOUR_MS = 3_600_000;
/** The audit log has an entry once the server has answered: a moment after the bench sees the pod going. */
const AUDIT_SETTLE_MS = 1_000;

export type WaveRun = {
  readonly round: number;
  readonly controller: ControllerKind;
  readonly nodes: number;
  readonly pods: number;
  /** The wave's start (the first agent back after an outage; else the first break) → the last DELETE accepted. */
  recoveryMs?: number;
  /** The wave's start → the first DELETE accepted. */
  firstDeleteMs?: number;
  deleted?: number;
  /** Deleted before its node's agent was back (outages only). */
  deletedDuringOutage?: number;
  deletesPerPod?: number;
  deletedTwice?: number;
  /** Most pods a controller had deleted and the kubelet had not finished at one moment, on one node. */
  maxInFlightNode?: number;
  /** The same in one namespace, across every node (each per-node instance keeps its own caps). */
  maxInFlightNamespace?: number;
  /** All its processes together, at the end. */
  rssBytes?: number;
  /** CPU of all its processes from the break (Istio's: from its start) to the end. */
  cpuSeconds?: number;
  error?: string;
};

export type NodeVictims = { readonly node: string; readonly victims: readonly Victim[] };

/** What a wave's `play` gets: the processes it starts, and `breaking()` to call right before the first break. */
export type WaveStage = {
  /** Each process once started, so it is stopped whatever happens. */
  readonly processes: WatchedProcess[];
  /** Opens the audit tail and marks the processes' CPU (one started later counts from its start). */
  breaking(): void;
};

/** Each node's agent back (the outages); none: the wave starts at the first break. */
export type WaveStart = { readonly backAtMs?: ReadonlyMap<string, number> };

/** `podsPerNode` healthy victims on each node, their own owner each, spread over the victim namespaces. */
export async function createWave(
  ctx: BenchContext,
  nodes: readonly string[],
  podsPerNode: number,
): Promise<NodeVictims[]> {
  const wave: NodeVictims[] = [];
  for (const node of nodes) {
    wave.push({
      node,
      victims: await createVictims(ctx.setup, ctx.batchName(), podsPerNode, node, ctx.params.concurrency),
    });
  }
  return wave;
}

/**
 * Runs one wave: `play` starts the processes, breaks the pods and says when the wave started; then this waits
 * for every pod to be deleted and reads the figures. Deleted pods take `params.outage.terminationMs` to
 * terminate, so the in-flight caps bind.
 */
export async function runWave(
  ctx: BenchContext,
  run: WaveRun,
  wave: readonly NodeVictims[],
  timeoutMs: number,
  play: (stage: WaveStage) => Promise<WaveStart>,
): Promise<WaveRun> {
  const processes: WatchedProcess[] = [];
  const cpuAtBreak = new Map<number, number>();
  let tail: AuditTail | undefined;
  const stage: WaveStage = {
    processes,
    breaking() {
      tail = new AuditTail(ctx.cluster.plane.auditLogPath);
      for (const child of processes) cpuAtBreak.set(child.pid, cpuSeconds(child.pid));
    },
  };
  const victims = wave.flatMap((node) => node.victims);
  const keys = victims.map(victimKey);
  ctx.kubelet.terminationMs = ctx.params.outage.terminationMs;
  try {
    const start = await play(stage);
    if (!tail) throw new Error("the wave broke no pods (play never called breaking())");
    const deleted = await ctx.kubelet.waitForDeleted(keys, timeoutMs);
    if (deleted < keys.length)
      run.error = `${keys.length - deleted} of ${keys.length} pods not deleted in ${timeoutMs} ms`;
    await sleep(AUDIT_SETTLE_MS + ctx.params.outage.terminationMs);
    run.rssBytes = processes.reduce((sum, child) => sum + rssBytes(child.pid), 0);
    run.cpuSeconds = processes.reduce(
      (sum, child) => sum + cpuSeconds(child.pid) - (cpuAtBreak.get(child.pid) ?? 0),
      0,
    );
    Object.assign(run, waveFigures(tail.read(), wave, start.backAtMs));
  } catch (error) {
    run.error = messageOf(error).split("\n")[0] ?? "";
  } finally {
    await Promise.all(processes.map(async (child) => await child.stop()));
    ctx.kubelet.terminationMs = 0;
    await removeUndeleted(ctx.setup, victims, ctx.kubelet.deletedAt, ctx.params.concurrency);
  }
  return run;
}

/** Each node's CNI agent pod, created if missing, Ready since an hour ago. */
export async function agentsReadyForAnHour(ctx: BenchContext, nodes: readonly string[]): Promise<void> {
  for (const node of nodes) await ensureCniAgent(ctx.setup, node);
  await setAgentsReady(ctx, nodes, new Date(Date.now() - AN_HOUR_MS));
}

/** Every node's agent Ready since `since`, or NotReady (undefined). */
export async function setAgentsReady(
  ctx: BenchContext,
  nodes: readonly string[],
  since: Date | undefined,
): Promise<void> {
  await Promise.all(nodes.map(async (node) => await setAgentReady(ctx.setup, node, since)));
}

/** Breaks every pod of the wave at once (validator exit 126), as the kubelet reports them. */
export async function breakAll(ctx: BenchContext, wave: readonly NodeVictims[]): Promise<void> {
  const victims = wave.flatMap((node) => node.victims);
  await inParallel(
    victims.length,
    BREAK_CONCURRENCY,
    async (k) => await breakVictim(ctx.breaker, victims[k] as Victim),
  );
}

type AuditLines = ReturnType<AuditTail["read"]>;

/** The figures of one wave from its audit lines; without `backAtMs` (no outage) it starts at the first break. */
export function waveFigures(
  lines: AuditLines,
  wave: readonly NodeVictims[],
  backAtMs: ReadonlyMap<string, number> | undefined,
): Partial<WaveRun> {
  const keys = wave.flatMap((node) => node.victims.map(victimKey));
  const nodeOf = new Map(wave.flatMap((node) => node.victims.map((victim) => [victimKey(victim), node.node])));
  const timings = repairTimings(lines, keys);
  // The first break as it arrived: a busy server can send its watch event (and so see the DELETE) before the
  // break's own answer is logged.
  const fromMs = backAtMs ? Math.min(...backAtMs.values()) : Math.min(...timings.map((t) => t.brokenReceivedMs));
  const deletes = timings.flatMap((t) => (t.deletedAtMs === undefined ? [] : [t.deletedAtMs])).sort((a, b) => a - b);
  const windows = deletionWindows(lines, keys, KUBELET_USER_AGENT);
  return {
    deleted: deletes.length,
    firstDeleteMs: (deletes[0] ?? Number.NaN) - fromMs,
    recoveryMs: deletes.length === keys.length ? (deletes.at(-1) as number) - fromMs : Number.NaN,
    ...(backAtMs && {
      deletedDuringOutage: timings.filter(
        (t) => t.deletedAtMs !== undefined && t.deletedAtMs < (backAtMs.get(nodeOf.get(t.key) ?? "") ?? Number.NaN),
      ).length,
    }),
    deletesPerPod: controllerDeleteRequests(lines, keys) / Math.max(1, deletes.length),
    deletedTwice: deletedTwice(lines, keys),
    maxInFlightNode: maxInFlight(windows, (key) => nodeOf.get(key) ?? ""),
    maxInFlightNamespace: maxInFlight(windows, (key) => key.split("/")[0] ?? ""),
  };
}

/**
 * One process per node, started together: cni-repair as the DaemonSet installs it with every default (the agent
 * gate on: here are agents), or Istio's controller. Each is added to `processes` once started; if any fails, the
 * first failure is thrown (the caller stops the others). Returns each node's process.
 */
export async function startOnNodes(
  ctx: BenchContext,
  controller: ControllerKind,
  nodes: readonly string[],
  processes: WatchedProcess[],
): Promise<Map<string, WatchedProcess>> {
  const byNode = new Map<string, WatchedProcess>();
  const started = await Promise.allSettled(
    nodes.map(async (node) => {
      const child = await startOne(ctx, controller, node);
      processes.push(child);
      byNode.set(node, child);
    }),
  );
  const failed = started.find((result) => result.status === "rejected");
  if (failed) throw failed.reason;
  return byNode;
}

async function startOne(ctx: BenchContext, controller: ControllerKind, node: string): Promise<WatchedProcess> {
  if (controller === "istio") {
    if (!ctx.istioRepair) throw new Error("Istio's repair controller is not built (bench/istio-repair/build.sh)");
    return (await startIstioRepair(ctx.istioRepair, ctx.kubeconfig, node, READY_TIMEOUT_MS)).process;
  }
  const started = await startController({
    kind: controller,
    kubeconfig: ctx.kubeconfig,
    inClusterEnv: ctx.inClusterEnv,
    extraArgs: [...ctx.ourFlags.always.filter((flag) => !flag.startsWith("--cni-agent-gate")), `--node-name=${node}`],
    readyTimeoutMs: READY_TIMEOUT_MS,
    nodeName: node,
    ...(ctx.candidate && { candidate: ctx.candidate }),
  });
  return started.process;
}
