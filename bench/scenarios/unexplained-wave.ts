// Breakage nothing explains, at the defaults (issue 27): pods on the side-by-side node (its healthy pods already
// there) break at once while the node's CNI agent has been Ready for an hour, few enough to stay under the storm
// threshold. cni-repair repairs them at its cluster-wide pace (10 at once, then one a second), which exists for
// exactly this case; Istio's controller is held only by its client's 5 requests per second. Both run all along.
import { setTimeout as sleep } from "node:timers/promises";
import type { ControllerKind } from "../lib/controllers.js";
import type { BenchContext } from "./context.js";
import { SIDE_NODE } from "./side-by-side.js";
import { agentsReadyForAnHour, breakAll, createWave, runWave, startOnNodes, type WaveRun } from "./wave.js";

/**
 * cni-repair's agent gate counts the agent's Ready time from when it first saw it (--cni-agent-min-ready, 10 s by
 * default): a controller that has run all along is past it. Istio has no such gate.
 */
const PAST_MIN_READY_MS = 11_000;

export async function runUnexplainedWave(
  ctx: BenchContext,
  round: number,
  controller: ControllerKind,
  pods: number,
  timeoutMs: number,
): Promise<WaveRun> {
  const run: WaveRun = { round, controller, nodes: 1, pods };
  const wave = await createWave(ctx, [SIDE_NODE], pods);
  await agentsReadyForAnHour(ctx, [SIDE_NODE]);
  return await runWave(ctx, run, wave, timeoutMs, async (stage) => {
    await startOnNodes(ctx, controller, [SIDE_NODE], stage.processes);
    if (controller !== "istio") await sleep(PAST_MIN_READY_MS);
    stage.breaking();
    await breakAll(ctx, wave);
    return {};
  });
}
