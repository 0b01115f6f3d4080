// createMetrics: every known series exists at zero on a fresh registry, and registries stay independent.

import { expect } from "chai";
import { Registry } from "prom-client";
import { startEventLoopMonitor } from "../../../src/observe/event-loop-monitor.js";
import { createMetrics, REPAIR_LATENCY_BUCKETS } from "../../../src/observe/metrics.js";
import { FakeClock } from "../fake-clock.js";

describe("observe/metrics", () => {
  it("initialises every known label combination to zero", async () => {
    const registry = new Registry();
    createMetrics(registry, { ruleNames: ["istio", "linkerd"], version: "1.2.3", revision: "abc123" });
    const text = await registry.metrics();

    for (const type of ["delete", "label", "report"]) {
      for (const result of ["success", "fail", "skip", "dry_run", "throttled"]) {
        expect(text).to.include(`cni_repair_pods_repaired_total{type="${type}",result="${result}"} 0\n`);
      }
    }
    for (const rule of ["istio", "linkerd"]) {
      expect(text).to.include(`cni_repair_broken_pods{rule="${rule}"} 0\n`);
      expect(text).to.include(`cni_repair_detections_total{rule="${rule}"} 0\n`);
    }
    for (const reason of ["timeout", "gone", "error", "stalled", "quiet"]) {
      expect(text).to.include(`cni_repair_watch_restarts_total{resource="pods",reason="${reason}"} 0\n`);
    }
    for (const type of ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]) {
      expect(text).to.include(`cni_repair_watch_events_total{resource="pods",type="${type}"} 0\n`);
    }
    for (const name of [
      "cni_repair_retries_exhausted_total",
      "cni_repair_cache_pods",
      "cni_repair_events_failed_total",
      "cni_repair_repair_latency_seconds_count",
    ]) {
      expect(text).to.include(`\n${name} 0\n`);
    }
    expect(text).to.include('cni_repair_last_sync_timestamp_seconds{resource="pods"} 0\n');
    expect(text).to.include("# TYPE cni_repair_api_requests_total counter");
    expect(text).to.include(
      `cni_repair_build_info{version="1.2.3",revision="abc123",node_version="${process.version}"} 1\n`,
    );
    expect(text).to.include("process_cpu_user_seconds_total");
  });

  it("times repairs from 10 ms to 30 min: holds (agent min-ready, Istio's crash-loop back-off) make them minutes", async () => {
    const registry = new Registry();
    const metrics = createMetrics(registry, { ruleNames: [], version: "dev" });
    expect(REPAIR_LATENCY_BUCKETS[0]).to.equal(0.01);
    expect(REPAIR_LATENCY_BUCKETS.at(-1)).to.equal(1800);
    // Istio's crash-loop back-off caps at 5 min: a repair after one such wait, or two, lands in a bucket of its own.
    expect(REPAIR_LATENCY_BUCKETS).to.include.members([300, 600]);
    metrics.repairLatencySeconds.observe(7 * 60);
    const text = await registry.metrics();
    expect(text).to.include('cni_repair_repair_latency_seconds_bucket{le="300"} 0\n');
    expect(text).to.include('cni_repair_repair_latency_seconds_bucket{le="600"} 1\n');
    expect(text).to.include('cni_repair_repair_latency_seconds_bucket{le="1800"} 1\n');
    expect(text).to.include('cni_repair_repair_latency_seconds_bucket{le="0.01"} 0\n');
  });

  it("records into the registry it was given, and two registries do not clash", async () => {
    const a = new Registry();
    const b = new Registry();
    const ma = createMetrics(a, { ruleNames: ["istio"], version: "a" });
    const mb = createMetrics(b, { ruleNames: ["istio"], version: "b" });

    ma.podsRepaired.inc({ type: "delete", result: "success" });
    ma.brokenPods.set({ rule: "istio" }, 3);
    ma.apiRequests.inc({ verb: "delete", code: "409" });
    ma.repairLatencySeconds.observe(0.2);
    mb.watchRestarts.inc({ resource: "pods", reason: "gone" });

    const textA = await a.metrics();
    const textB = await b.metrics();
    expect(textA).to.include('cni_repair_pods_repaired_total{type="delete",result="success"} 1\n');
    expect(textA).to.include('cni_repair_broken_pods{rule="istio"} 3\n');
    expect(textA).to.include('cni_repair_api_requests_total{verb="delete",code="409"} 1\n');
    expect(textA).to.include('cni_repair_repair_latency_seconds_bucket{le="0.25"} 1\n');
    expect(textA).to.include('cni_repair_watch_restarts_total{resource="pods",reason="gone"} 0\n');
    expect(textB).to.include('cni_repair_pods_repaired_total{type="delete",result="success"} 0\n');
    expect(textB).to.include('cni_repair_watch_restarts_total{resource="pods",reason="gone"} 1\n');
    expect(textB).to.include(
      `cni_repair_build_info{version="b",revision="unknown",node_version="${process.version}"} 1\n`,
    );
    expect(textB).not.to.include('version="a"');
  });

  it("exports what each rule does with a broken pod as cni_repair_rule_info, for the alerts to tell modes apart", async () => {
    const registry = new Registry();
    createMetrics(registry, {
      ruleNames: ["istio", "istio-ambient"],
      version: "dev",
      ruleActions: { istio: "delete", "istio-ambient": "report" },
    });
    const text = await registry.metrics();
    expect(text).to.include('cni_repair_rule_info{rule="istio",action="delete"} 1\n');
    expect(text).to.include('cni_repair_rule_info{rule="istio-ambient",action="report"} 1\n');
    expect(text.match(/^cni_repair_rule_info\{/gm)).to.have.length(2);
  });

  it("names only counters *_total (promtool check metrics): prom-client's nodejs_active_*_total gauges are gone", async () => {
    const registry = new Registry();
    createMetrics(registry, { ruleNames: ["istio"], version: "dev" });
    const text = await registry.metrics();
    const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => ({ name, type }));
    expect(types.length).to.be.greaterThan(20);
    const misnamed = types.filter(({ name, type }) => name?.endsWith("_total") && type !== "counter");
    expect(misnamed).to.deep.equal([]);
    expect(text).to.include("# TYPE nodejs_active_handles gauge");
  });

  it("takes the event-loop lag series from the heartbeat it is given, and none from a sampler of its own", async () => {
    const clock = new FakeClock();
    const monitor = startEventLoopMonitor({ intervalMs: 10, clock });
    try {
      const registry = new Registry();
      createMetrics(registry, { ruleNames: ["istio"], version: "1", eventLoop: monitor });
      clock.block(130); // the heartbeat due at 10 comes 120 ms late
      clock.advance(40);
      const value = async (name: string) =>
        Number(new RegExp(`^${name} (\\S+)$`, "m").exec(await registry.metrics())?.[1]);
      expect(await value("nodejs_eventloop_lag_max_seconds")).to.be.closeTo(0.12, 1e-3);
      // The scrape took the heartbeats: the next one sees only those since (none: 0).
      expect(await value("nodejs_eventloop_lag_max_seconds")).to.equal(0);
      const without = new Registry();
      createMetrics(without, { ruleNames: ["istio"], version: "1" });
      expect(await without.metrics()).to.not.include("nodejs_eventloop_lag");
      expect(await without.metrics()).to.include("process_cpu_seconds_total");
    } finally {
      monitor.stop();
    }
  });
});
