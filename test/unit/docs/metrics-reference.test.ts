// docs/metrics.md lists every cni_repair_ metric the controller registers, each with all of its labels.
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { Registry } from "prom-client";
import { createMetrics } from "../../../src/observe/metrics.js";
import { repositoryFile } from "../../harness/binaries.js";

/** prom-client keeps a metric's label names on the instance; its public type does not show them. */
type WithLabelNames = { readonly name: string; readonly labelNames?: readonly string[] };

describe("docs/metrics.md", () => {
  const reference = readFileSync(repositoryFile("docs/metrics.md"), "utf8");
  const registry = new Registry();
  createMetrics(registry, { ruleNames: ["istio"], version: "test" });
  const ours = (registry.getMetricsAsArray() as unknown as WithLabelNames[]).filter((m) =>
    m.name.startsWith("cni_repair_"),
  );

  it("finds the controller's metrics to check", () => {
    expect(ours.length).to.be.greaterThan(10);
  });

  for (const metric of ours) {
    it(`documents ${metric.name} and its labels`, () => {
      const row = reference.split("\n").find((line) => line.startsWith(`| \`${metric.name}\` |`));
      expect(row, `no table row for ${metric.name}`).to.be.a("string");
      for (const label of metric.labelNames ?? []) expect(row).to.include(`\`${label}\``);
    });
  }
});
