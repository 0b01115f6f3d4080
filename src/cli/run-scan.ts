// `cni-repair scan`: list once, print every broken pod and what `run` would do with it now; with --repair,
// make one pass of repairs under every guard and exit (for a CronJob or a script).
import { setTimeout as sleep } from "node:timers/promises";
import { Registry } from "prom-client";
import type { Config } from "../config/config.js";
import { decide, isPaced, modeFor } from "../decide/decide.js";
import { detect } from "../detect/detect.js";
import { podKey } from "../detect/facts.js";
import { createLogger, flushLogger, type Logger } from "../observe/logger.js";
import { createMetrics } from "../observe/metrics.js";
import { connectCluster } from "./connect-cluster.js";
import { buildPipeline, type Pipeline } from "./pipeline.js";
import { formatTable } from "./table.js";
import { VERSION } from "./version.js";

export type ScanRow = {
  readonly namespace: string;
  readonly pod: string;
  readonly node: string;
  readonly rule: string;
  readonly reason: string;
  /** What run would do now: delete, label, report, skip, or hold: <reason>. */
  readonly action: string;
  readonly detail: string;
};

/** Exit codes: 0 nothing broken, 1 broken pods found (or left after --repair), 2 errors. */
export async function runScan(config: Config): Promise<number> {
  // Scan speaks through its table; logs stay quiet unless asked for, and go to stderr.
  const logger = createLogger({ level: config.logLevel === "debug" ? "debug" : "warn", format: config.logFormat });
  const metrics = createMetrics(new Registry(), { ruleNames: config.rules.map((rule) => rule.name), version: VERSION });
  const stop = new AbortController();
  let failure: unknown;
  try {
    const transport = await connectCluster(config, metrics, logger.child({ component: "main" }));
    const progress = progressLine();
    const pipeline = buildPipeline(config, transport, metrics, logger, {
      // Without --repair nobody leads: the controller keeps its hands off and scan only reads.
      ...(!config.scan.repair && { leadership: { isLeader: false, waitForLeadership: async () => false } }),
      onListProgress: progress.update,
      onWatchError: (error) => {
        if (!pipeline.synced()) {
          failure ??= error;
          stop.abort();
        }
      },
    });
    const running = Promise.all([
      ...pipeline.reflectors.map((reflector) => reflector.run(stop.signal)),
      pipeline.controller.run(stop.signal),
    ]);
    while (!pipeline.synced() && !stop.signal.aborted) await sleep(20);
    progress.done();
    if (config.scan.repair && !stop.signal.aborted) await onePass(pipeline);
    const rows = stop.signal.aborted ? [] : scanRows(config, pipeline);
    stop.abort();
    await running;
    await pipeline.events.drain();
    await transport.close();
    if (failure !== undefined) throw failure;
    process.stdout.write(render(rows, config.scan.output));
    if (config.scan.repair) process.stderr.write(`${await repairSummary(metrics)}\n`);
    await flushLogger(logger);
    return rows.length === 0 ? 0 : 1;
  } catch (error) {
    stop.abort();
    await reportError(logger, error);
    return 2;
  }
}

/** What run would do with each broken pod now, in namespace/name order. */
function scanRows(config: Config, pipeline: Pipeline): ScanRow[] {
  const pods = [...pipeline.pods.values()].sort((a, b) =>
    a.namespace === b.namespace ? a.name.localeCompare(b.name) : a.namespace.localeCompare(b.namespace),
  );
  const rows: ScanRow[] = [];
  // The pace applies in order, as in run (the first pods get the burst), on a copy: scan spends no real token.
  const pace = pipeline.guards.dryPace();
  // Scan has no memory of when a pod entered ambient scope or an agent turned Ready: it goes by the pod's and the
  // kubelet's own times (run counts from its own sight as well, so it may wait longer than this shows).
  const context = {
    ...pipeline.context(),
    seenUnenrolledSince: undefined,
    agentsReadySince: (node: string, rule: string) => pipeline.guards.agentsReadySince(node, rule, "claimed"),
  };
  for (const facts of pods) {
    const verdict = detect(facts, config.rules, context);
    if (!verdict.broken) continue;
    const mode = modeFor(config.mode, config.rules, verdict.rule);
    const decision = decide({
      facts,
      verdict,
      mode,
      label: config.label,
      alreadyHandled: false,
      deleteBarePods: config.deleteBarePods,
      guards: mode === "label" ? {} : pipeline.guards.view(facts, verdict.rule, { pace }),
    });
    if (isPaced(decision)) pipeline.guards.commitPace(podKey(facts.namespace, facts.name), pace);
    const action =
      decision.kind === "hold" ? `hold: ${decision.reason}` : decision.kind === "act" ? decision.action : decision.kind;
    const detail = decision.kind === "hold" ? decision.detail : decision.kind === "skip" ? decision.reason : "";
    rows.push({
      namespace: facts.namespace,
      pod: facts.name,
      node: facts.nodeName ?? "",
      rule: verdict.rule,
      reason: verdict.reason,
      action,
      detail,
    });
  }
  return rows;
}

/** Waits until the controller has worked through everything queued (delayed holds stay held). */
async function onePass(pipeline: Pipeline): Promise<void> {
  let quietChecks = 0;
  while (quietChecks < 3) {
    await sleep(100);
    const idle = pipeline.queue.depth === 0 && pipeline.queue.processingCount === 0;
    quietChecks = idle ? quietChecks + 1 : 0;
  }
}

function render(rows: readonly ScanRow[], output: "table" | "json"): string {
  if (output === "json") return `${JSON.stringify(rows, null, 2)}\n`;
  if (rows.length === 0) return "No broken pods found.\n";
  return formatTable(
    ["NAMESPACE", "POD", "NODE", "RULE", "REASON", "ACTION"],
    rows.map((row) => [
      row.namespace,
      row.pod,
      row.node,
      row.rule,
      row.reason,
      row.detail ? `${row.action} (${row.detail})` : row.action,
    ]),
  );
}

async function repairSummary(metrics: ReturnType<typeof createMetrics>): Promise<string> {
  const counts = (await metrics.podsRepaired.get()).values.filter((value) => value.value > 0);
  const parts = counts.map((value) => `${value.labels.type} ${value.labels.result}: ${value.value}`);
  return `repair pass done: ${parts.length > 0 ? parts.join(", ") : "nothing to do"}`;
}

/** On a terminal, one line rewritten in place; elsewhere a line per second at most. Only past one second. */
function progressLine(): { update: (pods: number) => void; done: () => void } {
  const started = Date.now();
  let lastPrinted = 0;
  let printed = false;
  return {
    update: (pods) => {
      const now = Date.now();
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
