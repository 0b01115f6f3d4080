// The controller's parts for a one-shot command (scan, explain): started, its caches listed once, stopped when done.
// Read-only unless the command writes (scan --repair): without leadership the workers keep their hands off.
// Its guards go by the kubelet's Ready time of the CNI agents ("claimed"): it has not watched them before.
import type { Config } from "../config/config.js";
import type { DetectContext } from "../detect/detect.js";
import type { KubeTransport } from "../kube/transport.js";
import { createLogger, type Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";
import { type ComposeOptions, type ControllerParts, composeController } from "./compose.js";

export type SyncedParts = {
  readonly parts: ControllerParts;
  /** The list or watch error that stopped the first sync, if one did. */
  readonly failure: () => unknown;
  /** Stops the workers and the caches and waits for the Events in flight. */
  readonly stop: () => Promise<void>;
};

export async function startSynced(
  config: Config,
  transport: KubeTransport,
  metrics: Metrics,
  logger: Logger,
  options: Omit<ComposeOptions, "leadership" | "elector" | "onWatchError" | "agentReadyBasis"> & {
    readonly writes: boolean;
  },
): Promise<SyncedParts> {
  const gaveUp = new AbortController();
  let failure: unknown;
  let synced = false;
  const { writes, ...composeOptions } = options;
  const parts = composeController(config, transport, metrics, logger, {
    ...composeOptions,
    ...(!writes && { leadership: { isLeader: false, term: 0, waitForLeadership: async () => false } }),
    // No memory of the agents' past: the node-agent gate trusts the kubelet's Ready time when it is a past time, as
    // Kubernetes' own minReadySeconds does; a missing or future one holds (docs/operations.md, "One guarded pass").
    agentReadyBasis: "claimed",
    // A one-shot command gives up on the first failure before its caches are whole.
    onWatchError: (error) => {
      if (synced) return;
      failure ??= error;
      gaveUp.abort();
    },
  });
  parts.manager.start();
  synced = await parts.manager.waitForSync(gaveUp.signal);
  return {
    parts,
    failure: () => failure,
    stop: async () => {
      await parts.manager.stop();
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

/**
 * Detection's context for a one-shot command. It has no memory of when a pod entered ambient scope, and its guards
 * go by the kubelet's Ready time of the agents (startSynced): it goes by the pod's and the kubelet's own times.
 */
export function oneShotContext(parts: ControllerParts): DetectContext {
  return { ...parts.context(), seenUnenrolledSince: undefined };
}
