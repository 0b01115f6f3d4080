// Scenario 4: many pods broken at once (as fast as the server takes the writes); when was the last one deleted.
import { setTimeout as sleep } from "node:timers/promises";
import { AuditTail, repairTimings } from "../lib/audit.js";
import { inParallel } from "../lib/kube-client.js";
import { nodeCount } from "../lib/population.js";
import { breakVictim, createVictims, removeUndeleted, type Victim, victimKey } from "../lib/victims.js";
import type { BenchContext } from "./context.js";

export type MassResult = {
  readonly pods: number;
  readonly deleted: number;
  /** First broken-status write received to the last one accepted: how "at once" the breaking was. */
  readonly breakSpanMs: number;
  /** First broken-status write received to the last DELETE accepted. */
  readonly allDeletedMs: number;
  /** Last broken-status write to the last DELETE accepted: how far the controller lagged behind. */
  readonly lagAfterLastBreakMs: number;
  /** Each DELETE's time after the first broken-status write was received, sorted (for the shape chart). */
  readonly timelineMs: readonly number[];
};

const BREAK_CONCURRENCY = 64;

/** Victims go onto the nodes of a population of `size` pods. */
export async function massRepair(
  ctx: BenchContext,
  size: number,
  count: number,
  timeoutMs: number,
): Promise<MassResult> {
  const victims = await createVictims(ctx.setup, ctx.batchName(), count, nodeCount(size), ctx.params.concurrency);
  await sleep(2_000);
  const tail = new AuditTail(ctx.cluster.plane.auditLogPath);
  await inParallel(count, BREAK_CONCURRENCY, (k) => breakVictim(ctx.breaker, victims[k] as Victim));
  const keys = victims.map(victimKey);
  await ctx.kubelet.waitForDeleted(keys, timeoutMs);
  await sleep(300);
  const timings = repairTimings(tail.read(), keys);
  await removeUndeleted(ctx.setup, victims, ctx.kubelet.deletedAt, ctx.params.concurrency);
  // Start at the first write's arrival: under this load the server can emit the watch event, and a controller
  // can delete the pod, before it has finished answering the write itself.
  const firstBreak = Math.min(...timings.map((t) => t.brokenReceivedMs));
  const lastBreak = Math.max(...timings.map((t) => t.brokenAtMs));
  const timelineMs = timings
    .flatMap((t) => (t.deletedAtMs === undefined ? [] : [t.deletedAtMs - firstBreak]))
    .sort((a, b) => a - b);
  const lastDelete = timelineMs.length > 0 ? (timelineMs.at(-1) as number) + firstBreak : Number.NaN;
  const complete = timelineMs.length === count;
  return {
    pods: count,
    deleted: timelineMs.length,
    breakSpanMs: lastBreak - firstBreak,
    allDeletedMs: complete ? lastDelete - firstBreak : Number.NaN,
    lagAfterLastBreakMs: complete ? lastDelete - lastBreak : Number.NaN,
    timelineMs,
  };
}
