// The per-node mode (a DaemonSet's instance), in cluster as every cni-repair run of the bench (lib/in-cluster.ts).
// Per run: spawn → ready on an empty node, memory there (idle), then a second process on a node with 110 pods (the
// kubelet's default maximum) and its memory after sync; CPU time from spawn to ready of each.
import { setTimeout as sleep } from "node:timers/promises";
import { type ControllerKind, type StartedController, startController } from "../lib/controllers.js";
import { inParallel } from "../lib/kube-client.js";
import { createRunningPod, ensureNamespace } from "../lib/population.js";
import type { MemoryReading } from "../probe/preload.js";
import type { BenchContext } from "./context.js";

export const AGENT_NAMESPACE = "bench-node-agent";
const EMPTY_NODE = "agent-node-empty";
const FULL_NODE = "agent-node-full";
export const PODS_ON_FULL_NODE = 110;
const SETTLE_MS = 2_000;
const READY_TIMEOUT_MS = 60_000;

export type PerNodeRun = {
  readonly round: number;
  readonly controller: ControllerKind;
  emptyReadyMs?: number;
  /** CPU seconds the process used from spawn to ready (all threads). */
  emptyReadyCpuS?: number;
  idle?: MemoryReading;
  fullReadyMs?: number;
  fullReadyCpuS?: number;
  full?: MemoryReading;
  error?: string;
};

/** The 110 pods on the full node, in a namespace of their own (the cluster-wide runs see them too). */
export async function createNodeAgentPods(ctx: BenchContext): Promise<void> {
  await ensureNamespace(ctx.setup, AGENT_NAMESPACE);
  await inParallel(PODS_ON_FULL_NODE, ctx.params.concurrency, async (i) => {
    const app = `agent-app-${Math.floor(i / 10)}`;
    const pod = {
      namespace: AGENT_NAMESPACE,
      name: `${app}-6f7c9d8b5-${i.toString(36).padStart(4, "0")}`,
      app,
      index: i,
    };
    await createRunningPod(ctx.setup, pod, FULL_NODE);
  });
}

export async function runPerNode(ctx: BenchContext, round: number, controller: ControllerKind): Promise<PerNodeRun> {
  const run: PerNodeRun = { round, controller };
  const start = async (node: string) =>
    await startController({
      kind: controller,
      kubeconfig: ctx.kubeconfig,
      extraArgs: [...ctx.ourFlags.always, `--node-name=${node}`],
      readyTimeoutMs: READY_TIMEOUT_MS,
      inClusterEnv: ctx.inClusterEnv,
      nodeName: node,
      ...(ctx.candidate && { candidate: ctx.candidate }),
    });
  let started: StartedController | undefined;
  try {
    started = await start(EMPTY_NODE);
    run.emptyReadyMs = started.readyMs;
    run.emptyReadyCpuS = await started.process.cpuSeconds();
    await sleep(SETTLE_MS);
    run.idle = await started.process.memory();
    await started.process.stop();
    started = await start(FULL_NODE);
    run.fullReadyMs = started.readyMs;
    run.fullReadyCpuS = await started.process.cpuSeconds();
    await sleep(SETTLE_MS);
    run.full = await started.process.memory();
  } catch (error) {
    run.error = (error as Error).message.split("\n")[0] ?? String(error);
  } finally {
    await started?.process.stop();
  }
  return run;
}
