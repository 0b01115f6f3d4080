// The chart's monitoring objects come from files inside the chart (files/alerts.yaml, files/dashboard.json), so the
// chart as the release packages it (make chart-package) and a copy of its directory alone (a vendored chart) render
// the PrometheusRule and the dashboard equal to their source, never empty; without the files, rendering fails.
import { execFileSync } from "node:child_process";
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type KubernetesObject, loadAllYaml, loadYaml, type V1ConfigMap } from "@kubernetes/client-node";
import { expect } from "chai";
import { chartDir, helm, IMAGE_VALUES, packageChart, runHelm, setValues } from "../../harness/helm.js";
import { MONITORING_SOURCES, monitoringSource } from "../../harness/monitoring-files.js";
import { ownedTempDir } from "../../harness/owned-dirs.js";

type PrometheusRule = KubernetesObject & { spec: { groups: { rules: unknown[] }[] } };

const MONITORING_ON = { ...IMAGE_VALUES, "prometheusRule.enabled": "true", "dashboard.enabled": "true" };

/** The chart (a .tgz or a directory) rendered with its monitoring objects on. */
async function renderMonitoring(chart: string): Promise<{ rule: PrometheusRule; dashboard: V1ConfigMap }> {
  const yaml = await helm(["template", "cni-repair", chart, "--namespace", "cni-repair", ...setValues(MONITORING_ON)]);
  const objects = loadAllYaml(yaml) as KubernetesObject[];
  const rule = objects.find((object) => object.kind === "PrometheusRule") as PrometheusRule | undefined;
  const dashboard = objects.find(
    (object) => object.kind === "ConfigMap" && object.metadata?.name === "cni-repair-dashboard",
  ) as V1ConfigMap | undefined;
  if (!rule || !dashboard) throw new Error(`no PrometheusRule or dashboard ConfigMap rendered from ${chart}`);
  return { rule, dashboard };
}

function expectEqualToSource({ rule, dashboard }: { rule: PrometheusRule; dashboard: V1ConfigMap }): void {
  expect(rule.spec?.groups?.flatMap((group) => group.rules) ?? []).to.have.length.greaterThan(5);
  expect(rule.spec).to.deep.equal(loadYaml(readFileSync(monitoringSource("alerts.yaml"), "utf8")));
  const json = dashboard.data?.["cni-repair.json"] ?? "";
  expect((JSON.parse(json) as { panels: unknown[] }).panels).to.have.length.greaterThan(10);
  expect(json).to.equal(readFileSync(monitoringSource("dashboard.json"), "utf8"));
}

describe("chart: its monitoring files travel with it", function () {
  this.timeout(10 * 60_000);
  let packaged: string;

  before(() => {
    packaged = packageChart();
  });

  it("the packaged chart holds both as regular files", () => {
    // tar's long listing starts with the type: "-" a regular file, "l" a link.
    const listing = execFileSync("tar", ["-tvzf", packaged], { encoding: "utf8" }).split("\n");
    for (const name of MONITORING_SOURCES) {
      const entry = listing.find((line) => line.endsWith(` cni-repair/files/${name}`));
      expect(entry, `cni-repair/files/${name} in ${packaged}`).to.match(/^-/);
    }
  });

  it("the packaged chart renders the PrometheusRule and the dashboard, non-empty and equal to the source", async () => {
    expectEqualToSource(await renderMonitoring(packaged));
  });

  it("a copy of the chart's directory alone (vendored, links kept as links) renders them the same", async () => {
    const vendored = join(ownedTempDir("cni-repair-vendored-"), "cni-repair");
    cpSync(chartDir(), vendored, { recursive: true, verbatimSymlinks: true });
    expectEqualToSource(await renderMonitoring(vendored));
  });

  it("a chart missing either file, or with it empty, fails to render with monitoring on, naming the file", async () => {
    for (const name of MONITORING_SOURCES) {
      for (const damage of ["missing", "empty"] as const) {
        const chart = join(ownedTempDir("cni-repair-damaged-"), "cni-repair");
        cpSync(chartDir(), chart, { recursive: true });
        const file = join(chart, "files", name);
        if (damage === "missing") rmSync(file);
        else writeFileSync(file, "");
        const result = await runHelm(["template", "cni-repair", chart, ...setValues(MONITORING_ON)]);
        expect(result.code, `${name} ${damage}`).to.not.equal(0);
        expect(result.stderr, `${name} ${damage}`).to.include(`files/${name} is missing or empty`);
      }
    }
  });
});
