// One run of one controller at one population size: sync (3), memory (2), CPU per event (5), latency (1),
// memory after churn (2) and, at the largest size, mass repair (4). Every figure comes from this one process.
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { messageOf } from "../../src/util/message-of.js";
import { Churn } from "../lib/churn.js";
import { type ControllerKind, type StartedController, startController } from "../lib/controllers.js";
import type { MemoryReading } from "../probe/preload.js";
import type { BenchContext } from "./context.js";
import { type MassResult, massRepair } from "./mass-repair.js";
import { type LatencyResult, measureRepairLatency } from "./repair-latency.js";

export type CpuResult = {
  /** CPU seconds per wall second with no churn (timers, probes). */
  readonly idleCpuPerSecond: number;
  readonly windowSeconds: number;
  readonly cpuSeconds: number;
  /** Churn writes the server accepted in the window: each is one MODIFIED event on the controller's watch. */
  readonly events: number;
  readonly usPerEvent: number;
  /** Idle CPU over the same time taken out. */
  readonly netUsPerEvent: number;
};

export type TrialResult = {
  readonly size: number;
  readonly round: number;
  readonly controller: ControllerKind;
  readyMs?: number;
  listMs?: number;
  afterSync?: MemoryReading;
  afterChurn?: MemoryReading;
  cpu?: CpuResult;
  latency?: LatencyResult;
  mass?: MassResult;
  churnDropped?: number;
  exitCode?: number | null;
  error?: string;
};

export type TrialPlan = {
  readonly size: number;
  readonly round: number;
  readonly controller: ControllerKind;
  readonly withMass: boolean;
  /** Profile run: heap snapshot after sync and a CPU profile of the churn window into this directory. */
  readonly profileDir?: string;
};

const SETTLE_MS = 2_000;
const IDLE_WINDOW_MS = 5_000;

export async function runTrial(ctx: BenchContext, plan: TrialPlan): Promise<TrialResult> {
  const { params } = ctx;
  const result: TrialResult = { size: plan.size, round: plan.round, controller: plan.controller };
  let started: StartedController | undefined;
  const churn = new Churn(ctx.churner, plan.size, params.churnRate);
  try {
    started = await startController({
      kind: plan.controller,
      kubeconfig: ctx.kubeconfig,
      inClusterEnv: ctx.inClusterEnv,
      extraArgs: [...ctx.ourFlags.always, ...ctx.ourFlags.limitsOff],
      readyTimeoutMs: 60_000 + plan.size * 5,
      ...(ctx.candidate && { candidate: ctx.candidate }),
    });
    const child = started.process;
    result.readyMs = started.readyMs;
    if (started.listMs !== undefined) result.listMs = started.listMs;
    await sleep(SETTLE_MS);
    result.afterSync = await child.memory();
    if (plan.profileDir) {
      await child.probe({
        op: "heap-snapshot",
        path: join(plan.profileDir, `${plan.controller}-${plan.size}.heapsnapshot`),
      });
    }
    if (plan.size === 0) return result;

    const idle0 = await child.cpuSeconds();
    const idleStarted = performance.now();
    await sleep(IDLE_WINDOW_MS);
    const idleCpuPerSecond = ((await child.cpuSeconds()) - idle0) / ((performance.now() - idleStarted) / 1000);

    churn.start();
    if (plan.profileDir) await child.probe({ op: "profile-start" });
    const okBefore = churn.counts.ok;
    const cpu0 = await child.cpuSeconds();
    const t0 = performance.now();
    await sleep(params.cpuSeconds * 1000);
    const cpu = (await child.cpuSeconds()) - cpu0;
    const windowSeconds = (performance.now() - t0) / 1000;
    const events = churn.counts.ok - okBefore;
    if (plan.profileDir) {
      await child.probe({
        op: "profile-stop",
        path: join(plan.profileDir, `${plan.controller}-${plan.size}.cpuprofile`),
      });
    }
    result.cpu = {
      idleCpuPerSecond,
      windowSeconds,
      cpuSeconds: cpu,
      events,
      usPerEvent: (cpu / events) * 1e6,
      netUsPerEvent: (Math.max(0, cpu - idleCpuPerSecond * windowSeconds) / events) * 1e6,
    };

    const churnStarted = t0;
    result.latency = await measureRepairLatency(ctx, plan.size, params.latencyPods, params.latencyWindowSeconds);
    const remaining = params.churnSeconds * 1000 - (performance.now() - churnStarted);
    if (remaining > 0) await sleep(remaining);
    result.churnDropped = (await churn.stop()).dropped;
    await sleep(SETTLE_MS);
    result.afterChurn = await child.memory();

    if (plan.withMass) result.mass = await massRepair(ctx, plan.size, params.massPods, 120_000);
  } catch (error) {
    result.error = messageOf(error).split("\n")[0] ?? "";
  } finally {
    await churn.stop();
    if (started) result.exitCode = await started.process.stop();
  }
  return result;
}
