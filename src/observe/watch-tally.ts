// Each watch's events and the moment it last heard from the API server, tallied as plain numbers on the hot path
// and moved into cni_repair_watch_events_total and cni_repair_last_sync_timestamp_seconds when they are scraped.
// Why: a labelled prom-client update hashes and checks its labels, ~3% of the per-node instance's CPU per watch event.

/** The event types counted (metrics.ts's WATCH_EVENT_TYPES; kept here so metrics.ts can import this file). */
export type TalliedEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK";
type WatchEventType = TalliedEventType;
const WATCH_EVENT_TYPES: readonly WatchEventType[] = ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"];
type WatchResource = string;

/** The two series a tally is moved into (the `resource` label is the tally's). */
export type WatchTallySeries = {
  readonly watchEvents: { inc(labels: { resource: WatchResource; type: WatchEventType }, value: number): void };
  readonly lastSyncTimestampSeconds: { set(labels: { resource: WatchResource }, value: number): void };
};

export class WatchTally {
  readonly resource: WatchResource;
  readonly #events: Record<WatchEventType, number> = { ADDED: 0, MODIFIED: 0, DELETED: 0, BOOKMARK: 0 };
  /** Unix ms of the latest sync not yet moved into the gauge. */
  #syncedAtMs: number | undefined;

  constructor(resource: WatchResource) {
    this.resource = resource;
  }

  event(type: WatchEventType): void {
    this.#events[type]++;
  }

  /** A completed list or a watch event: the watch is in sync as of now. */
  synced(nowMs: number = Date.now()): void {
    this.#syncedAtMs = nowMs;
  }

  /** Moves what was tallied since the last move into the series, and starts afresh. */
  moveInto(series: WatchTallySeries): void {
    const { resource } = this;
    for (const type of WATCH_EVENT_TYPES) {
      const count = this.#events[type];
      if (count === 0) continue;
      series.watchEvents.inc({ resource, type }, count);
      this.#events[type] = 0;
    }
    if (this.#syncedAtMs === undefined) return;
    series.lastSyncTimestampSeconds.set({ resource }, this.#syncedAtMs / 1000);
    this.#syncedAtMs = undefined;
  }
}
