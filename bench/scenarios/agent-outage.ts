// Recovery after a CNI agent outage at the defaults (issue 27): a node's pods all broke while its agent was down;
// how long after the agent is back until the last is deleted. cni-repair runs as installed per node with every
// default (agent gate on, pace, caps, storm breaker) and sees the outage; Istio's repair controller lives in the
// agent itself (istio-cni starts it before anything else), so for it "agent back" is its process starting.
// The baseline has no notion of an agent and deletes during the outage: it is not run here.
import { setTimeout as sleep } from "node:timers/promises";
import { messageOf } from "../../src/util/message-of.js";
import { AuditTail, controllerDeleteRequests, deletedTwice, repairTimings } from "../lib/audit.js";
import { ensureCniAgent, setAgentReady } from "../lib/cni-agent.js";
import { type ControllerKind, startController } from "../lib/controllers.js";
import { startIstioRepair } from "../lib/istio-repair.js";
import { inParallel } from "../lib/kube-client.js";
import { breakVictim, createVictims, removeUndeleted, type Victim, victimKey } from "../lib/victims.js";
import type { WatchedProcess } from "../lib/watched-process.js";
import type { BenchContext } from "./context.js";

export const OUTAGE_NODE = "node-agent-outage";
const READY_TIMEOUT_MS = 60_000;
const BREAK_CONCURRENCY = 64;
/** While the agent is down cni-repair holds the broken pods; this long is enough to see it delete none. */
const OUTAGE_MS = 3_000;
const AN_HOUR_MS = 3_600_000;

export type OutageRun = {
  readonly round: number;
  readonly controller: ControllerKind;
  readonly pods: number;
  /** Agent back (its Ready write; Istio: its process spawned) → the server accepted the last DELETE. */
  recoveryMs?: number;
  /** Agent back → the first DELETE. */
  firstDeleteMs?: number;
  deleted?: number;
  /** Deleted before the agent was back (during the outage). */
  deletedDuringOutage?: number;
  deletesPerPod?: number;
  deletedTwice?: number;
  error?: string;
};

export async function runAgentOutage(
  ctx: BenchContext,
  round: number,
  controller: ControllerKind,
  pods: number,
  timeoutMs: number,
): Promise<OutageRun> {
  const run: OutageRun = { round, controller, pods };
  const victims = await createVictims(ctx.setup, ctx.batchName(), pods, OUTAGE_NODE, ctx.params.concurrency);
  const keys = victims.map(victimKey);
  await ensureCniAgent(ctx.setup, OUTAGE_NODE);
  // Ready for an hour before the outage, then down.
  await setAgentReady(ctx.setup, OUTAGE_NODE, new Date(Date.now() - AN_HOUR_MS));
  let child: WatchedProcess | undefined;
  try {
    if (controller !== "istio") child = (await startOurs(ctx, controller)).process;
    await setAgentReady(ctx.setup, OUTAGE_NODE, undefined);
    const tail = new AuditTail(ctx.cluster.plane.auditLogPath);
    await inParallel(pods, BREAK_CONCURRENCY, (k) => breakVictim(ctx.breaker, victims[k] as Victim));
    await sleep(OUTAGE_MS);
    let backAtMs: number;
    if (controller === "istio") {
      await setAgentReady(ctx.setup, OUTAGE_NODE, new Date());
      if (!ctx.istioRepair) throw new Error("Istio's repair controller is not built (bench/istio-repair/build.sh)");
      child = (await startIstioRepair(ctx.istioRepair, ctx.kubeconfig, OUTAGE_NODE, READY_TIMEOUT_MS)).process;
      backAtMs = child.startedAtWallMs;
    } else {
      backAtMs = Date.now();
      await setAgentReady(ctx.setup, OUTAGE_NODE, new Date(backAtMs));
    }
    await ctx.kubelet.waitForDeleted(keys, timeoutMs);
    await sleep(1_000);
    const lines = tail.read();
    const deletes = repairTimings(lines, keys)
      .flatMap((t) => (t.deletedAtMs === undefined ? [] : [t.deletedAtMs]))
      .sort((a, b) => a - b);
    run.deleted = deletes.length;
    run.deletedDuringOutage = deletes.filter((at) => at < backAtMs).length;
    run.firstDeleteMs = (deletes[0] ?? Number.NaN) - backAtMs;
    run.recoveryMs = deletes.length === pods ? (deletes.at(-1) as number) - backAtMs : Number.NaN;
    run.deletesPerPod = controllerDeleteRequests(lines, keys) / Math.max(1, deletes.length);
    run.deletedTwice = deletedTwice(lines, keys);
  } catch (error) {
    run.error = messageOf(error).split("\n")[0] ?? "";
  } finally {
    await child?.stop();
    await removeUndeleted(ctx.setup, victims, ctx.kubelet.deletedAt, ctx.params.concurrency);
  }
  return run;
}

/** cni-repair as the DaemonSet installs it, every guard at its default, the agent gate on (here is an agent). */
async function startOurs(ctx: BenchContext, controller: ControllerKind) {
  return await startController({
    kind: controller,
    kubeconfig: ctx.kubeconfig,
    inClusterEnv: ctx.inClusterEnv,
    extraArgs: [
      ...ctx.ourFlags.always.filter((flag) => !flag.startsWith("--cni-agent-gate")),
      `--node-name=${OUTAGE_NODE}`,
    ],
    readyTimeoutMs: READY_TIMEOUT_MS,
    nodeName: OUTAGE_NODE,
    ...(ctx.candidate && { candidate: ctx.candidate }),
  });
}
