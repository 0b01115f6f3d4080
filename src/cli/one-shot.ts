// The parts of a one-shot command: scan's controller, started, its caches listed once, stopped when done (read-only
// unless the command writes, scan --repair: without leadership the workers keep their hands off); explain's caches,
// listed once, and the query over them. Their guards go by the kubelet's Ready time of the CNI agents ("claimed"):
// they have not watched them before.
import type { Config } from "../config/config.js";
import type { KubeTransport } from "../kube/transport.js";
import { createLogger, type Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";
import { type ComposeOptions, type ControllerParts, composeController, composeQuery, NEVER_LEADS } from "./compose.js";
import type { PodQuery } from "./query.js";

export type SyncedParts = {
  readonly parts: ControllerParts;
  /** The list or watch error that stopped the first sync, if one did. */
  readonly failure: () => unknown;
  /** Stops the workers and the caches and waits for the Events in flight. */
  readonly stop: () => Promise<void>;
};

/** Scan: the controller's parts, started (read-only unless the command writes), once its caches are listed. */
export async function startSynced(
  config: Config,
  transport: KubeTransport,
  metrics: Metrics,
  logger: Logger,
  options: Omit<ComposeOptions, "leadership" | "elector" | "onWatchError" | "agentReadyBasis"> & {
    readonly writes: boolean;
  },
): Promise<SyncedParts> {
  const sync = firstSync();
  const { writes, ...composeOptions } = options;
  const parts = composeController(config, transport, metrics, logger, {
    ...composeOptions,
    ...(!writes && { leadership: NEVER_LEADS }),
    agentReadyBasis: ONE_SHOT_BASIS,
    onWatchError: sync.onWatchError,
  });
  parts.manager.start();
  await sync.done(parts.manager.waitForSync(sync.gaveUp));
  return {
    parts,
    failure: sync.failure,
    stop: async () => {
      await parts.manager.stop();
    },
  };
}

/**
 * Explain: the caches a judgement reads, each listed once and no longer watched, and the questions asked of them.
 * No Event writer, manager, queue, worker, controller or election is built.
 */
export async function listedOnce(
  config: Config,
  transport: KubeTransport,
  metrics: Metrics,
  logger: Logger,
): Promise<{ readonly query: PodQuery; readonly failure: () => unknown }> {
  const sync = firstSync();
  const { caches, query } = composeQuery(config, transport, metrics, logger, {
    agentReadyBasis: ONE_SHOT_BASIS,
    onWatchError: sync.onWatchError,
  });
  const stop = new AbortController();
  const running = caches.map((cache) => cache.run(stop.signal));
  await sync.done(Promise.all(caches.map((cache) => cache.waitForSync(sync.gaveUp))));
  stop.abort();
  await Promise.all(running);
  return { query, failure: sync.failure };
}

/**
 * No memory of the agents' past: the node-agent gate trusts the kubelet's Ready time when it is a past time, as
 * Kubernetes' own minReadySeconds does; a missing or future one holds (docs/operations.md, "One guarded pass").
 */
const ONE_SHOT_BASIS = "claimed";

/** A one-shot command gives up on the first list or watch failure before its caches are whole. */
function firstSync() {
  const gaveUp = new AbortController();
  let failure: unknown;
  let synced = false;
  return {
    gaveUp: gaveUp.signal,
    failure: () => failure,
    onWatchError: (error: unknown) => {
      if (synced) return;
      failure ??= error;
      gaveUp.abort();
    },
    /** Waits for the sync; later failures are the retrying watch's business, not the command's. */
    done: async (syncing: Promise<unknown>) => {
      await syncing;
      synced = true;
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
