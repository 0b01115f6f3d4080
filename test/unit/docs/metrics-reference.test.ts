// docs/metrics.md and the metrics the controller registers are the same set: every metric of ours (cni_repair_*,
// the startup-taint ones, the standard workqueue and controller-runtime ones) has a table row with its type and
// every label, and every table row names a metric that is registered. prom-client's default process and Node.js
// metrics are described in prose, not in the tables; the three it would register under counter names are not.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { expect } from "chai";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { createMetrics } from "../../../src/observe/metrics.js";
import { createTaintMetrics } from "../../../src/prevent/taint-metrics.js";
import { repositoryFile } from "../../harness/binaries.js";

/** prom-client keeps a metric's label names on the instance; its public type does not show them. */
type Registered = { readonly name: string; readonly labelNames?: readonly string[] };

/** The modules that register metrics (through the factory); the test below registers every one of them. */
const REGISTERING_MODULES = ["observe/metrics.ts", "observe/standard-metrics.ts", "prevent/taint-metrics.ts"];

function typeOf(metric: unknown): string {
  if (metric instanceof Counter) return "counter";
  if (metric instanceof Gauge) return "gauge";
  if (metric instanceof Histogram) return "histogram";
  return "unknown";
}

describe("docs/metrics.md", () => {
  const reference = readFileSync(repositoryFile("docs/metrics.md"), "utf8");
  const registry = new Registry();
  createMetrics(registry, { ruleNames: ["istio"], version: "test" });
  createTaintMetrics(registry, ["cni.istio.io/not-ready"], {
    taintedNodes: () => 0,
    heldNodes: () => 0,
    longestSeconds: () => 0,
  });
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults });
  const defaultNames = new Set(defaults.getMetricsAsArray().map((metric) => metric.name));
  const ours = registry.getMetricsAsArray().filter((metric) => !defaultNames.has(metric.name));
  const rows = new Map(
    [...reference.matchAll(/^\| `([a-z_:][\w:]*)` \| (\w+) \|(.*)$/gm)].map((match) => [
      match[1] ?? "",
      { type: match[2], rest: match[3] ?? "" },
    ]),
  );

  it("finds the metrics to check, ours and the standard ones", () => {
    expect(ours.length).to.be.greaterThan(30);
    expect(ours.map((metric) => metric.name)).to.include.members(["workqueue_depth", "cni_repair_startup_taint_nodes"]);
  });

  it("every module that registers metrics is one this test registers", () => {
    const src = join(dirname(repositoryFile("package.json")), "src");
    const registering = readdirSync(src, { recursive: true, encoding: "utf8" })
      .filter(
        (path) =>
          path.endsWith(".ts") &&
          /\bmetricFactory\(|new (Counter|Gauge|Histogram|Summary)\b/.test(readFileSync(join(src, path), "utf8")),
      )
      .map((path) => relative(src, join(src, path)))
      .filter((path) => path !== "observe/metric-factory.ts");
    expect([...registering].sort()).to.deep.equal([...REGISTERING_MODULES].sort());
  });

  for (const metric of ours as unknown as Registered[]) {
    it(`documents ${metric.name}, its type and its labels`, () => {
      const row = rows.get(metric.name);
      expect(row, `no table row for ${metric.name}`).to.not.equal(undefined);
      expect(row?.type).to.equal(typeOf(metric));
      for (const label of metric.labelNames ?? []) expect(row?.rest).to.include(`\`${label}\``);
    });
  }

  it("every metric in its tables is registered", () => {
    const registered = new Set(ours.map((metric) => metric.name));
    expect([...rows.keys()].filter((name) => !registered.has(name))).to.deep.equal([]);
  });

  it("the default metrics it says are left out are not registered", () => {
    const registered = new Set(registry.getMetricsAsArray().map((metric) => metric.name));
    for (const name of [
      "nodejs_active_handles_total",
      "nodejs_active_requests_total",
      "nodejs_active_resources_total",
    ]) {
      expect(reference).to.include(`\`${name}\``);
      expect(registered.has(name), name).to.equal(false);
    }
  });
});
