// The metrics and logs every watch reports, whatever it caches: list sizes and times, events by type, restarts,
// and when it last heard from the API server, each by the watch's `resource` label, so a busy watch (nodes) cannot
// hide a quiet or stuck one (pods).
import type { Logger } from "../observe/logger.js";
import { initWatchSeries, type Metrics, type WatchResource, type WatchRestartReason } from "../observe/metrics.js";
import { messageOf, stackOf } from "../util/message-of.js";
import type { ReflectorObserver } from "./reflector.js";

export type WatchHooks = {
  /** After each full list, with the number of items kept. */
  readonly listed?: (count: number) => void;
  /** A list or watch failed (the reflector retries regardless); scan gives up on the first. */
  readonly failed?: ((error: unknown) => void) | undefined;
};

/** Restarts the API server's own ways cause (a watch's timeout, a quiet one after a streamed list): no warning. */
const ROUTINE_RESTARTS: ReadonlySet<WatchRestartReason> = new Set(["timeout", "quiet"]);

export function watchTelemetry(
  metrics: Metrics,
  resource: WatchResource,
  log: Logger,
  hooks: WatchHooks = {},
): ReflectorObserver {
  initWatchSeries(metrics, resource);
  const tally = metrics.watchTally(resource);
  const heard = () => tally.synced();
  return {
    listed: (count, durationMs) => {
      heard();
      log.info("listed", { count, durationMs: Math.round(durationMs) });
      hooks.listed?.(count);
    },
    watchEvent: (type) => {
      if (type === "ADDED" || type === "MODIFIED" || type === "DELETED" || type === "BOOKMARK") {
        tally.event(type);
      }
      heard();
    },
    undecodable: (key, error) => {
      metrics.watchUndecodableObjects.inc({ resource });
      log.warn("object not readable as protobuf: reading it as JSON", {
        ...(key !== undefined && { namespace: key.namespace, name: key.name }),
        error: messageOf(error),
        ...(key === undefined && { fallback: "the whole watch, as JSON from now on" }),
      });
    },
    watchRestart: (reason, error) => {
      metrics.watchRestarts.inc({ resource, reason });
      const fields = { reason, ...(error !== undefined && { error: messageOf(error) }) };
      if (ROUTINE_RESTARTS.has(reason)) log.debug("watch restarted", fields);
      else log.warn("watch restarted", fields);
      if (reason === "error" || reason === "gone") hooks.failed?.(error);
    },
    // A bug of ours, not the API server's: an error with its stack, and the key it failed on (a pod's namespace/name).
    listenerFailed: (key, error) => {
      metrics.listenerFailures.inc({ resource });
      log.error("listener failed", { key, error: stackOf(error) });
    },
  };
}
