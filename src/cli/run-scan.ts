// `cni-repair scan`: list once, print how many pods were checked in which scope, every broken pod and what `run`
// would do with it now; with --repair, make one pass of repairs under every guard, print the results and exit.
import { setTimeout as sleep } from "node:timers/promises";
import type { Config } from "../config/config.js";
import { podKey } from "../detect/facts.js";
import { describeIstioRepair } from "../detect/istio-repair-settings.js";
import { flushLogger, type Logger } from "../observe/logger.js";
import { createMetrics } from "../observe/metrics.js";
import { Registry } from "../observe/prom-client.js";
import type { ControllerParts } from "./compose.js";
import { connectCluster } from "./connect-cluster.js";
import { oneShotLogger, startSynced } from "./one-shot.js";
import { checkPermissions } from "./permission-check.js";
import type { PodQuery } from "./query.js";
import { renderScan, scanCounts, scanScope, startupTaintRecord } from "./scan-output.js";
import { type ScanRecord, scanRecord } from "./scan-record.js";
import { VERSION } from "./version.js";

/** Exit codes: 0 nothing broken, 1 broken pods found (or left after --repair), 2 errors, 3 missing permissions. */
export async function runScan(config: Config): Promise<number> {
  const logger = oneShotLogger(config);
  const metrics = createMetrics(new Registry(), { ruleNames: config.rules.map((rule) => rule.name), version: VERSION });
  try {
    const transport = await connectCluster(config, metrics, logger.child({ component: "main" }));
    if (config.scan.repair) {
      // As run does, before any write; scan takes no Lease, so election permissions are not asked for.
      const missing = await checkPermissions({ ...config, leaderElection: undefined }, transport, logger);
      if (missing !== undefined) {
        process.stderr.write(`cni-repair scan: missing permissions:\n${missing}\n`);
        await transport.close();
        await flushLogger(logger);
        return 3;
      }
    }
    const progress = progressLine();
    const written = new Map<string, ScanRecord>();
    const { parts, failure, stop } = await startSynced(config, transport, metrics, logger, {
      writes: config.scan.repair,
      startupTaintsReadOnly: true,
      onListProgress: progress.update,
      onOutcome: (facts, verdict, decision, outcome) =>
        written.set(podKey(facts.namespace, facts.name), scanRecord(config, facts, verdict, decision, outcome)),
    });
    progress.done();
    const synced = failure() === undefined;
    const { query } = parts;
    const checked = query.size;
    if (config.scan.repair && synced) await onePass(parts);
    const records = synced ? scanRecords(config, query, written) : [];
    const startupTaints = query.startupTaints()?.map(startupTaintRecord);
    // Deleted pods are gone or terminating; labelled, reported, refused and held ones are still broken.
    const stillBroken = records.filter((record) => {
      const facts = query.pod(podKey(record.namespace, record.name));
      return facts !== undefined && query.verdict(facts).broken;
    }).length;
    await stop();
    await transport.close();
    if (!synced) throw failure();
    // Said when Istio's repair is there (or cannot be read); its absence changes nothing and is not news.
    const istio = query.istioRepair();
    const report = {
      scope: scanScope(config),
      counts: scanCounts(checked, records),
      pods: records,
      ...(startupTaints && { startupTaints }),
      ...(istio && istio.kind !== "absent" && { istioRepair: describeIstioRepair(istio) }),
    };
    process.stdout.write(renderScan(report, config.scan.output));
    if (config.scan.repair) process.stderr.write(`${await repairSummary(metrics)}\n`);
    await flushLogger(logger);
    return stillBroken === 0 ? 0 : 1;
  } catch (error) {
    await reportError(logger, error);
    return 2;
  }
}

/**
 * One record per broken pod, in namespace/name order: what was written to it in this run (--repair), else what
 * run would do with it now. Pods written to and since gone (deleted) keep their record.
 */
function scanRecords(config: Config, query: PodQuery, written: ReadonlyMap<string, ScanRecord>): ScanRecord[] {
  const records = new Map(written);
  // The paces apply in order, as in run (the first pods get the burst), on a copy: scan spends no real token.
  const dry = query.dryRun();
  for (const facts of [...query.pods()].sort(byName)) {
    const key = podKey(facts.namespace, facts.name);
    if (records.has(key)) continue;
    const { verdict, decision } = query.judge(facts, dry);
    if (verdict.broken) records.set(key, scanRecord(config, facts, verdict, decision));
  }
  return [...records.values()].sort(byName);
}

const byName = (a: { namespace: string; name: string }, b: { namespace: string; name: string }): number =>
  a.namespace === b.namespace ? a.name.localeCompare(b.name) : a.namespace.localeCompare(b.namespace);

/**
 * Waits until the pod controller has worked through everything queued (delayed holds stay held), and has stayed
 * idle for three looks in a row: a repair's own watch events may queue a pod again a moment later.
 */
async function onePass(parts: ControllerParts): Promise<void> {
  let quietChecks = 0;
  while (quietChecks < 3) {
    await sleep(100);
    quietChecks = parts.controller.idle() ? quietChecks + 1 : 0;
  }
}

async function repairSummary(metrics: ReturnType<typeof createMetrics>): Promise<string> {
  const counts = (await metrics.podsRepaired.get()).values.filter((value) => value.value > 0);
  const parts = counts.map((value) => `${value.labels.type} ${value.labels.result}: ${value.value}`);
  return `repair pass done: ${parts.length > 0 ? parts.join(", ") : "nothing to do"}`;
}

/** On a terminal, one line rewritten in place; elsewhere a line per second at most. Only past one second. */
function progressLine(): { update: (pods: number) => void; done: () => void } {
  const started = performance.now();
  let lastPrinted = 0;
  let printed = false;
  return {
    update: (pods) => {
      const now = performance.now();
      if (now - started < 1_000 || now - lastPrinted < 1_000) return;
      lastPrinted = now;
      printed = true;
      process.stderr.write(process.stderr.isTTY ? `\rlisting pods: ${pods}` : `listing pods: ${pods}\n`);
    },
    done: () => {
      if (printed && process.stderr.isTTY) process.stderr.write("\n");
    },
  };
}

async function reportError(logger: Logger, error: unknown): Promise<void> {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`cni-repair scan: ${message}\n`);
  await flushLogger(logger);
}
