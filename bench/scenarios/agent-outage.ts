// Recovery after a CNI agent outage at the defaults (issue 27): every pod on the nodes broke while the nodes'
// agents were down; how long after the agents are back until the last is deleted. One node's 110 pods (the
// kubelet's default maximum), and 1,000 across nodes, one process per node for each controller. cni-repair runs
// all along and sees the outage; Istio's repair controller lives in the agent itself (istio-cni starts it before
// anything else), so for it "agent back" is its process starting. The baseline has no notion of an agent and
// deletes during the outage: it is not run here.
import { setTimeout as sleep } from "node:timers/promises";
import type { ControllerKind } from "../lib/controllers.js";
import type { BenchContext } from "./context.js";
import {
  agentsReadyForAnHour,
  breakAll,
  createWave,
  runWave,
  setAgentsReady,
  startOnNodes,
  type WaveRun,
} from "./wave.js";

/** While the agents are down cni-repair holds the broken pods; this long is enough to see it delete none. */
const OUTAGE_MS = 3_000;

/** The one node of the single-node outage, or the i-th of several. */
export const outageNodes = (count: number): string[] =>
  count === 1 ? ["node-agent-outage"] : Array.from({ length: count }, (_, i) => `node-agent-outage-${i}`);

export async function runAgentOutage(
  ctx: BenchContext,
  round: number,
  controller: ControllerKind,
  shape: { readonly nodes: number; readonly podsPerNode: number },
  timeoutMs: number,
): Promise<WaveRun> {
  const nodes = outageNodes(shape.nodes);
  const run: WaveRun = { round, controller, nodes: nodes.length, pods: nodes.length * shape.podsPerNode };
  const wave = await createWave(ctx, nodes, shape.podsPerNode);
  await agentsReadyForAnHour(ctx, nodes);
  return await runWave(ctx, run, wave, timeoutMs, async (stage) => {
    if (controller !== "istio") await startOnNodes(ctx, controller, nodes, stage.processes);
    await setAgentsReady(ctx, nodes, undefined);
    stage.breaking();
    await breakAll(ctx, wave);
    await sleep(OUTAGE_MS);
    if (controller === "istio") {
      await setAgentsReady(ctx, nodes, new Date());
      const started = await startOnNodes(ctx, controller, nodes, stage.processes);
      return { backAtMs: new Map([...started].map(([node, child]) => [node, child.startedAtWallMs])) };
    }
    const backAtMs = Date.now();
    await setAgentsReady(ctx, nodes, new Date(backAtMs));
    return { backAtMs: new Map(nodes.map((node) => [node, backAtMs])) };
  });
}
