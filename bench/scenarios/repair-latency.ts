// Scenario 1: victims turned broken at random moments; latency from the server accepting the broken status
// to it accepting the controller's DELETE, both read from the API server's audit log (one clock).
import { setTimeout as sleep } from "node:timers/promises";
import { AuditTail, repairTimings } from "../lib/audit.js";
import { nodeCount } from "../lib/population.js";
import { breakVictim, createVictims, removeUndeleted, victimKey } from "../lib/victims.js";
import { type LatencySummary, latencySummary } from "../report/stats.js";
import type { BenchContext } from "./context.js";

export type LatencyResult = LatencySummary & {
  readonly victims: number;
  readonly repaired: number;
  readonly samplesMs: readonly number[];
};

/** Give the controller time to cache freshly created victims before they break. */
const CACHE_SETTLE_MS = 1_000;
const REPAIR_TIMEOUT_MS = 30_000;

/** Victims go onto the nodes of a population of `size` pods. */
export async function measureRepairLatency(
  ctx: BenchContext,
  size: number,
  count: number,
  windowSeconds: number,
): Promise<LatencyResult> {
  const victims = await createVictims(ctx.setup, ctx.batchName(), count, nodeCount(size), ctx.params.concurrency);
  await sleep(CACHE_SETTLE_MS);
  const tail = new AuditTail(ctx.cluster.plane.auditLogPath);
  await Promise.all(
    victims.map(async (victim) => {
      await sleep(Math.random() * windowSeconds * 1000);
      await breakVictim(ctx.breaker, victim);
    }),
  );
  const keys = victims.map(victimKey);
  await ctx.kubelet.waitForDeleted(keys, REPAIR_TIMEOUT_MS);
  await sleep(300);
  const timings = repairTimings(tail.read(), keys);
  const samplesMs = timings.flatMap((t) => (t.deletedAtMs === undefined ? [] : [t.deletedAtMs - t.brokenAtMs]));
  await removeUndeleted(ctx.setup, victims, ctx.kubelet.deletedAt, ctx.params.concurrency);
  return { victims: count, repaired: samplesMs.length, samplesMs, ...latencySummary(samplesMs) };
}
