// watchTelemetry: each watch's events, restarts and last sync are counted under its own `resource`, so node
// traffic cannot hide a pod watch that has gone quiet (issue 25).
import { expect } from "chai";
import { Registry } from "prom-client";
import { watchTelemetry } from "../../../src/informer/watch-telemetry.js";
import { createMetrics } from "../../../src/observe/metrics.js";
import { silentLogger } from "../../support/loggers.js";

describe("informer/watch-telemetry", () => {
  const logger = silentLogger();

  it("keeps the last sync, events and restarts of each watched resource apart", async () => {
    const registry = new Registry();
    const metrics = createMetrics(registry, { ruleNames: [], version: "test" });
    const pods = watchTelemetry(metrics, "pods", logger);
    const nodes = watchTelemetry(metrics, "nodes", logger);
    pods.listed(3, 10);
    const podsSyncedAt = (await lastSync(registry)).pods ?? 0;
    expect(podsSyncedAt).to.be.above(0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    nodes.listed(1, 10);
    nodes.watchEvent("MODIFIED");
    nodes.watchRestart("gone", new Error("410"));

    const synced = await lastSync(registry);
    expect(synced.pods, "node traffic leaves the pod watch's last sync alone").to.equal(podsSyncedAt);
    expect(synced.nodes).to.be.above(podsSyncedAt);
    const text = await registry.metrics();
    expect(text).to.include('cni_repair_watch_events_total{resource="nodes",type="MODIFIED"} 1\n');
    expect(text).to.include('cni_repair_watch_events_total{resource="pods",type="MODIFIED"} 0\n');
    expect(text).to.include('cni_repair_watch_restarts_total{resource="nodes",reason="gone"} 1\n');
    expect(text).to.include('cni_repair_watch_restarts_total{resource="pods",reason="gone"} 0\n');
  });

  it("creates a watch's series at zero, and creating its telemetry again keeps a sync already recorded", async () => {
    const registry = new Registry();
    const metrics = createMetrics(registry, { ruleNames: [], version: "test" });
    watchTelemetry(metrics, "namespaces", logger);
    expect((await lastSync(registry)).namespaces).to.equal(0);
    watchTelemetry(metrics, "pods", logger).listed(1, 1);
    const before = (await lastSync(registry)).pods;
    watchTelemetry(metrics, "pods", logger);
    expect((await lastSync(registry)).pods).to.equal(before);
  });
});

async function lastSync(registry: Registry): Promise<Record<string, number>> {
  const values = (await registry.getSingleMetric("cni_repair_last_sync_timestamp_seconds")?.get())?.values ?? [];
  return Object.fromEntries(values.map((value) => [String(value.labels.resource), value.value]));
}
