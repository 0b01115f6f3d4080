// The long churn (scenario 2, "after a 10-minute churn"): replicas of every controller run at once through the
// same churn and pod turnover, memory read from each at a fixed interval, to show whether memory stays flat.
// Running them side by side costs one soak per run instead of one per controller and round; memory is per
// process, so sharing the machine changes how fast they work, not what they keep.
import { setTimeout as sleep } from "node:timers/promises";
import { messageOf } from "../../src/util/message-of.js";
import { Churn } from "../lib/churn.js";
import { type ControllerKind, type StartedController, startController } from "../lib/controllers.js";
import { nodeCount } from "../lib/population.js";
import { breakVictim, createVictims, removeVictims, type Victim, victimKey } from "../lib/victims.js";
import type { MemoryReading } from "../probe/preload.js";
import type { BenchContext } from "./context.js";

export type SoakSample = {
  readonly controller: ControllerKind;
  readonly replica: number;
  /** Seconds since the churn started (0: just before). */
  readonly atSeconds: number;
  readonly memory: MemoryReading;
};

export type SoakResult = {
  readonly size: number;
  /** cni-repair and the baseline: a candidate is a before/after aid and sits the soak out. */
  readonly kinds: readonly ControllerKind[];
  readonly seconds: number;
  readonly replicas: number;
  readonly samples: readonly SoakSample[];
  /** Status writes the server accepted (each a MODIFIED event on every controller's watch). */
  readonly churnWrites: number;
  readonly churnDropped: number;
  /** Pods broken, deleted by a controller and finished by the fake kubelet during the soak (turnover). */
  readonly podsReplaced: number;
  readonly errors: readonly string[];
};

const SETTLE_MS = 2_000;
/** Pod turnover: every TURNOVER_EVERY_MS a few victims are created, then broken, so pods come and go. */
const TURNOVER_EVERY_MS = 10_000;
const TURNOVER_PODS = 5;

export async function runSoak(ctx: BenchContext, size: number): Promise<SoakResult> {
  const { params } = ctx;
  const replicas = params.soakReplicas;
  const kinds = ctx.kinds.filter((kind) => kind !== "candidate");
  const running: { controller: ControllerKind; replica: number; started: StartedController }[] = [];
  const samples: SoakSample[] = [];
  const errors: string[] = [];
  const churn = new Churn(ctx.churner, size, params.churnRate);
  const victims: Victim[] = [];
  try {
    // Started one at a time: syncs at once would only measure contention.
    for (let replica = 1; replica <= replicas; replica++) {
      for (const controller of kinds) {
        const started = await startController({
          kind: controller,
          kubeconfig: ctx.kubeconfig,
          inClusterEnv: ctx.inClusterEnv,
          extraArgs: [...ctx.ourFlags.always, ...ctx.ourFlags.limitsOff],
          readyTimeoutMs: 60_000 + size * 5,
          ...(ctx.candidate && { candidate: ctx.candidate }),
        });
        running.push({ controller, replica, started });
      }
    }
    await sleep(SETTLE_MS);
    const sampleAll = async (atSeconds: number) => {
      for (const { controller, replica, started } of running) {
        if (!started.process.running) {
          errors.push(`${controller} replica ${replica} exited at ${Math.round(atSeconds)} s`);
          continue;
        }
        samples.push({ controller, replica, atSeconds, memory: await started.process.memory() });
      }
    };
    await sampleAll(0);

    churn.start();
    const began = performance.now();
    const elapsed = () => (performance.now() - began) / 1000;
    let nextSample = params.soakSampleSeconds;
    let nextTurnover = 0;
    while (elapsed() < params.soakSeconds) {
      if (elapsed() * 1000 >= nextTurnover) {
        nextTurnover += TURNOVER_EVERY_MS;
        const batch = await createVictims(ctx.setup, ctx.batchName(), TURNOVER_PODS, nodeCount(size), 4);
        victims.push(...batch);
        // Cached healthy first, broken a second later: the repair path (delete, Event) runs on every controller.
        void sleep(1_000).then(() => Promise.all(batch.map((victim) => breakVictim(ctx.breaker, victim))));
      }
      if (elapsed() >= nextSample) {
        await sampleAll(Math.round(elapsed()));
        ctx.progress(`soak at ${size} pods: ${Math.round(elapsed())}/${params.soakSeconds} s, ${describe(samples)}`);
        nextSample += params.soakSampleSeconds;
      }
      await sleep(200);
    }
    await churn.stop();
    await sleep(SETTLE_MS);
    await sampleAll(Math.round(elapsed()));
  } catch (error) {
    errors.push(messageOf(error).split("\n")[0] ?? "");
  } finally {
    await churn.stop();
    for (const { started } of running) await started.process.stop();
  }
  const replaced = (victim: Victim) => ctx.kubelet.deletedAt.has(victimKey(victim));
  const podsReplaced = victims.filter(replaced).length;
  await removeVictims(
    ctx.setup,
    victims.filter((victim) => !replaced(victim)),
    params.concurrency,
  );
  return {
    size,
    kinds,
    seconds: params.soakSeconds,
    replicas,
    samples,
    churnWrites: churn.counts.ok,
    churnDropped: churn.counts.dropped,
    podsReplaced,
    errors,
  };
}

/** The newest heap reading per controller kind, for the progress line. */
function describe(samples: readonly SoakSample[]): string {
  const latest = new Map<ControllerKind, SoakSample>();
  for (const sample of samples) latest.set(sample.controller, sample);
  return [...latest.values()]
    .map(
      (s) =>
        `${s.controller} heap ${(s.memory.heapUsed / 2 ** 20).toFixed(1)} MB RSS ${(s.memory.rss / 2 ** 20).toFixed(0)} MB`,
    )
    .join(", ");
}
