// The pipeline of a one-shot command (scan, explain): started, its caches listed once, stopped when done.
// Read-only unless the command writes (scan --repair): without leadership the controller keeps its hands off.
import { setTimeout as sleep } from "node:timers/promises";
import type { Config } from "../config/config.js";
import type { KubeTransport } from "../kube/transport.js";
import { createLogger, type Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";
import { buildPipeline, type Pipeline, type PipelineOptions } from "./pipeline.js";

export type SyncedPipeline = {
  readonly pipeline: Pipeline;
  /** The list or watch error that stopped the first sync, if one did. */
  readonly failure: () => unknown;
  /** Stops the caches and the controller and waits for the Events in flight. */
  readonly stop: () => Promise<void>;
};

export async function startSynced(
  config: Config,
  transport: KubeTransport,
  metrics: Metrics,
  logger: Logger,
  options: Omit<PipelineOptions, "leadership" | "onWatchError"> & { readonly writes: boolean },
): Promise<SyncedPipeline> {
  const stop = new AbortController();
  let failure: unknown;
  const { writes, ...pipelineOptions } = options;
  const pipeline = buildPipeline(config, transport, metrics, logger, {
    ...pipelineOptions,
    ...(!writes && { leadership: { isLeader: false, waitForLeadership: async () => false } }),
    // A one-shot command gives up on the first failure before its caches are whole.
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
  return {
    pipeline,
    failure: () => failure,
    stop: async () => {
      stop.abort();
      await running;
      await pipeline.events.drain();
    },
  };
}

/** A one-shot command speaks through stdout: its logs are warnings only, human text unless JSON is asked for. */
export function oneShotLogger(config: Config): Logger {
  return createLogger({
    level: config.logLevel === "debug" ? "debug" : "warn",
    format: config.logFormatGiven ? config.logFormat : "text",
  });
}
