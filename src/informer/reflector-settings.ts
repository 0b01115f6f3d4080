// The settings every reflector shares, from the flags: one place for the page size, how the first list is taken,
// watch timeouts and backoff.
import type { Config } from "../config/config.js";
import type { KubeTransport } from "../kube/transport.js";
import type { ReflectorOptions } from "./reflector.js";

export type ReflectorSettings = Pick<
  ReflectorOptions<unknown>,
  "transport" | "pageSize" | "watchList" | "watchTimeoutMs" | "stallTimeoutMs" | "backoff"
>;

/** A failing list or watch retries after 0.5 s, doubling up to 30 s, with half of each wait random. */
const RETRY_BACKOFF = { baseMs: 500, maxMs: 30_000, jitter: 0.5 } as const;

export function reflectorSettings(config: Config, transport: KubeTransport): ReflectorSettings {
  return {
    transport,
    pageSize: config.listPageSize,
    // Every collection, not only pods: a streamed list is one request where a LIST and a WATCH are two, which at
    // a fleet's rollout is requests the one API server answers per instance (bench/README.md, "Fleet rollout").
    watchList: config.watchList,
    watchTimeoutMs: config.watchTimeoutMs,
    stallTimeoutMs: config.watchStallTimeoutMs,
    backoff: RETRY_BACKOFF,
  };
}
