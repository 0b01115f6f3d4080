// `make bench`: grows a pod population step by step and runs cni-repair and the client-node baseline side by
// side (alternating) at each size; writes results.json, charts and a table into bench/results/<time>/.
// Parameters: BENCH_* environment variables (see bench/params.ts and bench/README.md).
import { mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startBenchCluster } from "./lib/cluster.js";
import { bareListMs, type ControllerKind, detectOurFlags, OUR_MAIN } from "./lib/controllers.js";
import { FakeKubelet, KUBELET_USER_AGENT } from "./lib/fake-kubelet.js";
import { inClusterEnvironment } from "./lib/in-cluster.js";
import { findIstioRepair } from "./lib/istio-repair.js";
import { BenchClient } from "./lib/kube-client.js";
import { describeMachine } from "./lib/machine.js";
import { growPopulation } from "./lib/population.js";
import { lineOf, Skips } from "./lib/skips.js";
import { ensureVictimNamespaces } from "./lib/victims.js";
import { readParams } from "./params.js";
import { latencyCdf, massTimeline, memoryVsPods } from "./report/charts.js";
import { fleetTable } from "./report/fleet.js";
import { perNodeTable } from "./report/per-node.js";
import { agentOutageTable, sideBySideTable, unexplainedWaveTable } from "./report/side-by-side.js";
import { soakChart, soakTable } from "./report/soak.js";
import { spread } from "./report/stats.js";
import { summarize } from "./report/summary.js";
import { type FloorRun, sizeTable } from "./report/table.js";
import { runAgentOutage } from "./scenarios/agent-outage.js";
import type { BenchContext } from "./scenarios/context.js";
import { createFleet, type FleetRun, removeFleet, runFleetRollout } from "./scenarios/fleet-rollout.js";
import type { MassResult } from "./scenarios/mass-repair.js";
import { massRepairWithDefaultLimits } from "./scenarios/mass-shape.js";
import { AGENT_NAMESPACE, createNodeAgentPods, type PerNodeRun, runPerNode } from "./scenarios/per-node.js";
import { createSidePods, removeSidePods, runSideBySide, type SideRun } from "./scenarios/side-by-side.js";
import { runSoak, type SoakResult } from "./scenarios/soak.js";
import { runTrial, type TrialResult } from "./scenarios/trial.js";
import { runUnexplainedWave } from "./scenarios/unexplained-wave.js";
import type { WaveRun } from "./scenarios/wave.js";

const KEEP_RUNS = 10;
const params = readParams();
const began = performance.now();
const progress = (line: string) => {
  const s = Math.round((performance.now() - began) / 1000);
  console.error(`[bench ${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}] ${line}`);
};
const machine = describeMachine();
const stamp = new Date().toISOString().replace(/[:.]/g, "-");
const resultsDir = resolve(params.outDir, stamp);
mkdirSync(resultsDir, { recursive: true });
const ourFlags = detectOurFlags();
const candidate = params.candidate && {
  main: params.candidate.main ?? OUR_MAIN,
  nodeFlags: params.candidate.nodeFlags,
  env: params.candidate.env,
};
const kinds: ControllerKind[] = candidate ? ["cni-repair", "candidate", "baseline"] : ["cni-repair", "baseline"];
if (candidate) {
  const env = Object.entries(candidate.env).map(([name, value]) => `${name}=${value}`);
  progress(`candidate: ${[candidate.main, ...candidate.nodeFlags, ...env].join(" ")}`);
}
const skips = new Skips(progress);
const istio = findIstioRepair();
const istioRepair = istio.binary;
// Istio's controller is node-scoped by construction (it always adds spec.nodeName=<node>): side-by-side runs only.
const sideKinds: ControllerKind[] = istioRepair ? [...kinds, "istio"] : kinds;
progress(
  `machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}; load ${machine.loadAverage.join(" ")}`,
);
progress(
  `sizes ${params.sizes.join(", ")}; ${params.rounds} rounds; churn ${params.churnRate}/s; results in ${resultsDir}`,
);
progress(`cni-repair flags: ${[...ourFlags.always, ...ourFlags.limitsOff].join(" ") || "(none needed)"}`);
for (const note of ourFlags.notes) progress(`note: ${note}`);

const cluster = await startBenchCluster();
const clients = {
  setup: new BenchClient(cluster.access, "bench-setup/1"),
  breaker: new BenchClient(cluster.access, "bench-break/1"),
  churner: new BenchClient(cluster.access, "bench-churn/1"),
  kubelet: new BenchClient(cluster.access, KUBELET_USER_AGENT),
};
const kubelet = new FakeKubelet(clients.kubelet);
let batches = 0;
// Its namespace names only where a Lease would go (every run here has --leader-elect=false).
const inCluster = inClusterEnvironment(cluster, AGENT_NAMESPACE);
const ctx: BenchContext = {
  cluster,
  kubeconfig: cluster.plane.kubeconfigPath,
  inClusterEnv: inCluster.env,
  ...clients,
  kubelet,
  params,
  ourFlags,
  kinds,
  candidate,
  istioRepair,
  resultsDir,
  progress,
  batchName: () => `v${(batches++).toString(36)}`,
};

const trials: TrialResult[] = [];
const floors: FloorRun[] = [];
const massRuns: { name: string; mass: MassResult }[] = [];
let populationSeconds = 0;
let soak: SoakResult | undefined;
const perNodeRuns: PerNodeRun[] = [];
const sideRuns: SideRun[] = [];
const outage = params.outage;
const outageShapes = [
  { nodes: 1, podsPerNode: outage.pods },
  { nodes: outage.nodes, podsPerNode: outage.nodePods },
].filter((shape) => shape.nodes * shape.podsPerNode > 0);
const outageRuns: WaveRun[] = [];
const unexplainedRuns: WaveRun[] = [];
// The baseline knows no CNI agent (it deletes during the outage) and no defaults: these compare cni-repair and Istio.
const outageKinds = sideKinds.filter((kind) => kind !== "baseline");
const unexplainedRounds = outage.unexplainedPods > 0 ? outage.rounds : 0;
const fleet = params.fleet;
const fleetRuns: FleetRun[] = [];
// What a DaemonSet runs: the baseline is no per-node workload anyone installs.
const fleetKinds = outageKinds;
const istioRuns = [
  params.side.pods > 0 && params.side.rounds > 0 && "side-by-side",
  params.side.pods > 0 && unexplainedRounds > 0 && "unexplained-wave",
  outage.rounds > 0 && outageShapes.length > 0 && "agent-outage",
  fleet.nodes > 0 && fleet.rounds > 0 && "fleet rollout",
].filter((name) => name !== false);
if (istio.binary !== undefined) progress(`Istio's repair controller: ${istio.binary}`);
else if (istioRuns.length > 0) {
  skips.skip(`Istio's repair controller in the ${istioRuns.join(", ")} runs`, istio.why, istio.asked);
}
const WAVE_TIMEOUT_MS = 300_000;
/** Alternating who goes first, per round. */
const inOrder = <T>(round: number, items: readonly T[]): readonly T[] =>
  round % 2 === 1 ? items : [...items].reverse();
try {
  await ensureVictimNamespaces(clients.setup);
  kubelet.start();
  if (params.perNodeRounds > 0) {
    await createNodeAgentPods(ctx);
    for (let round = 1; round <= params.perNodeRounds; round++) {
      for (const controller of inOrder(round, kinds)) {
        const run = await runPerNode(ctx, round, controller);
        perNodeRuns.push(run);
        progress(`per-node, round ${round}, ${controller}: ${describePerNode(run)}`);
      }
    }
  }
  if (fleet.nodes > 0 && fleet.rounds > 0) {
    await createFleet(ctx);
    for (let round = 1; round <= fleet.rounds; round++) {
      for (const controller of inOrder(round, fleetKinds)) {
        const run = await runFleetRollout(ctx, round, controller);
        fleetRuns.push(run);
        progress(`fleet rollout on ${fleet.nodes} nodes, round ${round}, ${controller}: ${describeFleet(run)}`);
      }
    }
    await removeFleet(ctx);
  }
  if (params.side.pods > 0 && params.side.rounds + unexplainedRounds > 0) {
    await createSidePods(ctx);
    for (let round = 1; round <= params.side.rounds; round++) {
      for (const controller of inOrder(round, sideKinds)) {
        const run = await runSideBySide(ctx, round, controller);
        sideRuns.push(run);
        progress(`side by side, round ${round}, ${controller}: ${describeSide(run)}`);
      }
    }
    // On the same node: its healthy pods keep the wave under the storm threshold.
    for (let round = 1; round <= unexplainedRounds; round++) {
      for (const controller of inOrder(round, outageKinds)) {
        const run = await runUnexplainedWave(ctx, round, controller, outage.unexplainedPods, WAVE_TIMEOUT_MS);
        unexplainedRuns.push(run);
        progress(`unexplained wave, round ${round}, ${controller}: ${describeWave(run)}`);
      }
    }
    await removeSidePods(ctx);
  }
  for (let round = 1; round <= outage.rounds; round++) {
    for (const shape of outageShapes) {
      for (const controller of inOrder(round, outageKinds)) {
        const run = await runAgentOutage(ctx, round, controller, shape, WAVE_TIMEOUT_MS);
        outageRuns.push(run);
        progress(
          `agent outage, ${shape.nodes} × ${shape.podsPerNode} pods, round ${round}, ${controller}: ${describeWave(run)}`,
        );
      }
    }
  }
  let population = 0;
  for (const size of params.sizes) {
    if (size > population) {
      populationSeconds += await growPopulation(clients.setup, population, size, params.concurrency, progress);
      population = size;
    }
    const largest = size === params.pods;
    for (let round = 1; round <= params.rounds; round++) {
      if (size > 0) {
        const floor = await bareListMs(ctx.kubeconfig, 60_000 + size * 5);
        floors.push({ size, round, totalMs: floor.totalMs, listMs: floor.listMs });
        progress(
          `${size} pods, round ${round}: bare paginated LIST ${Math.round(floor.totalMs)} ms (${floor.pods} pods)`,
        );
      }
      // Alternate who goes first, so slow drift on a shared machine does not favour one side.
      for (const controller of inOrder(round, kinds)) {
        const trial = await runTrial(ctx, { size, round, controller, withMass: largest && params.massPods > 0 });
        trials.push(trial);
        progress(`${size} pods, round ${round}, ${controller}: ${describe(trial)}`);
        if (trial.mass && round === 1) massRuns.push({ name: `${controller}, limits off`, mass: trial.mass });
      }
    }
    if (largest && params.profile) {
      const profileDir = join(resultsDir, "profiles");
      mkdirSync(profileDir, { recursive: true });
      for (const controller of kinds) {
        await runTrial(ctx, { size, round: 0, controller, withMass: false, profileDir });
        progress(`profiled ${controller} at ${size} pods into ${profileDir}`);
      }
    }
    if (largest && params.massPods > 0) {
      if (ourFlags.hasLimits) {
        const mass = await massRepairWithDefaultLimits(ctx, size);
        massRuns.push({ name: "cni-repair, default limits", mass });
        progress(
          `mass repair with default limits: ${mass.deleted}/${mass.pods} deleted within ${params.massLimitedSeconds} s`,
        );
      } else {
        skips.skip("the mass repair with default limits", "cni-repair has no deletion limits yet", false);
      }
    }
    if (largest && params.soakSeconds > 0) {
      progress(`soak: ${params.soakReplicas} replicas of each controller at once, ${params.soakSeconds} s of churn`);
      soak = await runSoak(ctx, size);
      for (const error of soak.errors) progress(`soak: ${error}`);
    }
  }
} finally {
  await kubelet.stop();
  for (const client of Object.values(clients)) await client.close();
  inCluster.cleanup();
  await cluster.stop();
}

const summaries = summarize(trials, kinds);
const side = params.side;
const tables = (
  sideRuns.length > 0
    ? [
        sideBySideTable(sideRuns, sideKinds, {
          pods: side.pods,
          isolated: side.isolatedPods,
          burst: side.burstPods,
          burstRate: side.burstRate,
          cpuEvents: side.cpuEvents,
        }),
      ]
    : []
)
  .concat(
    unexplainedRuns.length > 0
      ? [unexplainedWaveTable(unexplainedRuns, outageKinds, { pods: outage.unexplainedPods, healthy: side.pods })]
      : [],
  )
  .concat(
    outageShapes.flatMap((shape) => {
      const runs = outageRuns.filter((run) => run.nodes === shape.nodes);
      return runs.length > 0 ? [agentOutageTable(runs, outageKinds, shape)] : [];
    }),
  )
  .concat(fleetRuns.length > 0 ? [fleetTable(fleetRuns, fleetKinds, fleet)] : [])
  .concat(perNodeRuns.length > 0 ? [perNodeTable(perNodeRuns, kinds)] : [])
  .concat(
    summaries.map((summary) =>
      sizeTable(
        summary,
        summary.size === 0
          ? undefined
          : spread(floors.filter((f) => f.size === summary.size).map((f) => f.totalMs / 1000)),
      ),
    ),
  )
  .concat(soak ? [soakTable(soak)] : [])
  .join("\n\n");
writeFileSync(
  join(resultsDir, "results.json"),
  `${JSON.stringify({ params, machine, ourFlags, kinds, istioRepair, populationSeconds, sideRuns, unexplainedRuns, outageRuns, fleetRuns, perNodeRuns, trials, floors, massRuns, soak, summaries, skipped: skips.all }, null, 1)}\n`,
);
writeFileSync(join(resultsDir, "table.md"), `${tables}\n`);
if (soak) writeFileSync(join(resultsDir, "memory-over-time.svg"), soakChart(soak));
// Only size 0 (a per-node run, BENCH_SIZES=0) repairs nothing: no latency to chart.
if (trials.some((trial) => (trial.latency?.samplesMs.length ?? 0) > 0)) {
  writeFileSync(join(resultsDir, "latency-cdf.svg"), latencyCdf(trials, kinds));
}
if (trials.length > 0) writeFileSync(join(resultsDir, "memory-vs-pods.svg"), memoryVsPods(trials, kinds));
if (massRuns.length > 0) writeFileSync(join(resultsDir, "mass-repair.svg"), massTimeline(massRuns));
const latest = resolve(params.outDir, "latest");
rmSync(latest, { force: true });
symlinkSync(stamp, latest);
// Keep the newest runs only (smoke runs happen on every `make test`).
const runs = readdirSync(params.outDir)
  .filter((name) => /^\d{4}-\d\d-\d\dT/.test(name))
  .sort();
for (const old of runs.slice(0, -KEEP_RUNS)) rmSync(resolve(params.outDir, old), { recursive: true, force: true });
console.log(tables);
const failed = [
  ...trials.map((run) => ({ ...run, where: `${run.size} pods` })),
  ...perNodeRuns.map((run) => ({ ...run, where: "per-node" })),
  ...sideRuns.map((run) => ({ ...run, where: "side by side" })),
  ...unexplainedRuns.map((run) => ({ ...run, where: "unexplained wave" })),
  ...outageRuns.map((run) => ({ ...run, where: `agent outage on ${run.nodes} node(s)` })),
  ...fleetRuns.map((run) => ({ ...run, where: `fleet rollout on ${run.nodes} nodes` })),
].filter((run) => run.error !== undefined);
for (const run of failed) progress(`failed: ${run.controller} at ${run.where}, round ${run.round}: ${run.error}`);
for (const skip of skips.all) progress(lineOf(skip));
progress(`done in ${Math.round((performance.now() - began) / 1000)} s; results in ${resultsDir}`);
// A smoke run must prove the scenarios work end to end: any failed trial, or scenario that could not run, fails it.
if (params.smoke && (failed.length > 0 || (soak?.errors.length ?? 0) > 0 || skips.unasked.length > 0)) {
  process.exitCode = 1;
}

function describe(trial: TrialResult): string {
  if (trial.error !== undefined) return `FAILED: ${trial.error}`;
  const parts = [`ready ${Math.round(trial.readyMs ?? Number.NaN)} ms`];
  if (trial.afterSync)
    parts.push(
      `heap ${(trial.afterSync.heapUsed / 2 ** 20).toFixed(1)} MB, RSS ${(trial.afterSync.rss / 2 ** 20).toFixed(0)} MB`,
    );
  if (trial.cpu) parts.push(`${Math.round(trial.cpu.usPerEvent)} µs/event over ${trial.cpu.events} events`);
  if (trial.latency)
    parts.push(
      `latency p50 ${trial.latency.p50.toFixed(1)} ms, max ${trial.latency.max.toFixed(1)} ms (${trial.latency.repaired}/${trial.latency.victims})`,
    );
  if (trial.mass)
    parts.push(`mass ${trial.mass.deleted}/${trial.mass.pods} in ${(trial.mass.allDeletedMs / 1000).toFixed(2)} s`);
  return parts.join("; ");
}

function describePerNode(run: PerNodeRun): string {
  if (run.error !== undefined) return `FAILED: ${run.error}`;
  const mb = (bytes: number | undefined) => ((bytes ?? Number.NaN) / 2 ** 20).toFixed(1);
  return `ready ${Math.round(run.emptyReadyMs ?? Number.NaN)} ms, idle RSS ${mb(run.idle?.rss)} MB; with 110 pods RSS ${mb(run.full?.rss)} MB`;
}

function describeSide(run: SideRun): string {
  if (run.error !== undefined) return `FAILED: ${run.error}`;
  const ms = (value: number | undefined, digits = 0) => (value ?? Number.NaN).toFixed(digits);
  return [
    `start-up ${ms(run.startupMs)} ms (ready ${ms(run.readyMs)} ms, CPU ${ms(run.readyCpuMs)} ms)`,
    `isolated p50 ${ms(run.isolated?.p50, 1)} / p99 ${ms(run.isolated?.p99, 1)} ms ` +
      `(to the DELETE's arrival ${ms(run.isolatedReaction?.p50, 1)}, the server's DELETE ${ms(run.isolatedServer?.p50, 1)})`,
    `${ms(run.cpuUsPerEvent)} µs/event, idle ${ms(run.idleCpuMsPerSecond, 2)} ms/s`,
    `RSS ${ms((run.rssAfterSync ?? Number.NaN) / 2 ** 20)} / ${ms((run.rssAfterBurst ?? Number.NaN) / 2 ** 20)} MB`,
    `burst p50 ${ms(run.burst?.p50)} / p99 ${ms(run.burst?.p99)} ms`,
    `${ms(run.deletesPerRepairedPod, 2)} DELETEs per pod`,
  ].join("; ");
}

function describeFleet(run: FleetRun): string {
  if (run.error !== undefined) return `FAILED: ${run.error}`;
  const s = (value: number | undefined, digits = 2) => (value ?? Number.NaN).toFixed(digits);
  const mb = (bytes: number | undefined) => ((bytes ?? Number.NaN) / 2 ** 20).toFixed(0);
  return (
    `all synced in ${s((run.allSyncedMs ?? Number.NaN) / 1000)} s; API server CPU ${s(run.apiRolloutCpuS)} s ` +
    `(/metrics ${s(run.apiRolloutMetricsCpuS)}), RSS peak ${mb(run.apiRssPeakBytes)} MB; at rest ` +
    `${s(run.apiRestCpuMsPerS, 1)} ms/s (before ${s(run.apiIdleBeforeCpuMsPerS, 1)}), RSS ${mb(run.apiRestRssBytes)} MB, ` +
    `${run.watchesOpened} watches; instances CPU ${s(run.instancesCpuToSyncedS)} s to synced, ` +
    `${s(run.instancesRestCpuMsPerS)} ms/s at rest, RSS ${mb(run.instancesRssBytes)} MB`
  );
}

function describeWave(run: WaveRun): string {
  if (run.error !== undefined) return `FAILED: ${run.error}`;
  const s = (ms: number | undefined) => ((ms ?? Number.NaN) / 1000).toFixed(2);
  const from = run.deletedDuringOutage === undefined ? "the first break" : "the agent was back";
  return (
    `${run.deleted}/${run.pods} deleted, the last ${s(run.recoveryMs)} s after ${from} (first ${s(run.firstDeleteMs)} s); ` +
    (run.deletedDuringOutage === undefined ? "" : `${run.deletedDuringOutage} during the outage, `) +
    `${run.deletedTwice} deleted twice, ${(run.deletesPerPod ?? Number.NaN).toFixed(2)} DELETEs per pod, ` +
    `in flight at most ${run.maxInFlightNode} on a node / ${run.maxInFlightNamespace} in a namespace; ` +
    `RSS ${((run.rssBytes ?? Number.NaN) / 2 ** 20).toFixed(0)} MB, CPU ${(run.cpuSeconds ?? Number.NaN).toFixed(2)} s`
  );
}
