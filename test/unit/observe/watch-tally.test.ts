// Watch tallies: counted as plain numbers, moved into their series when scraped, each count once.
import { expect } from "chai";
import { Registry } from "prom-client";
import { createMetrics } from "../../../src/observe/metrics.js";
import { WatchTally } from "../../../src/observe/watch-tally.js";

describe("observe/watch-tally", () => {
  it("moves each event and the latest sync once, then starts afresh", () => {
    const incs: string[] = [];
    const sets: number[] = [];
    const series = {
      watchEvents: {
        inc: (l: { resource: string; type: string }, n: number) => incs.push(`${l.resource} ${l.type} ${n}`),
      },
      lastSyncTimestampSeconds: { set: (_l: { resource: string }, v: number) => sets.push(v) },
    };
    const tally = new WatchTally("pods");
    tally.event("MODIFIED");
    tally.event("MODIFIED");
    tally.event("DELETED");
    tally.synced(1_000);
    tally.synced(2_500);
    tally.moveInto(series);
    expect(incs).to.deep.equal(["pods MODIFIED 2", "pods DELETED 1"]);
    expect(sets).to.deep.equal([2.5]);
    tally.moveInto(series);
    expect(incs, "nothing new: nothing moved").to.have.length(2);
    expect(sets).to.have.length(1);
  });

  it("shows in the scrape without any other call, one tally per resource", async () => {
    const registry = new Registry();
    const metrics = createMetrics(registry, { ruleNames: [], version: "test" });
    expect(metrics.watchTally("pods")).to.equal(metrics.watchTally("pods"));
    metrics.watchTally("pods").event("ADDED");
    metrics.watchTally("pods").synced(7_000);
    const first = await registry.metrics();
    expect(first).to.include('cni_repair_watch_events_total{resource="pods",type="ADDED"} 1\n');
    expect(first).to.include('cni_repair_last_sync_timestamp_seconds{resource="pods"} 7\n');
    metrics.watchTally("pods").event("ADDED");
    const second = await registry.metrics();
    expect(second).to.include('cni_repair_watch_events_total{resource="pods",type="ADDED"} 2\n');
    expect(second, "no sync since: the last one stays").to.include(
      'cni_repair_last_sync_timestamp_seconds{resource="pods"} 7\n',
    );
  });
});
