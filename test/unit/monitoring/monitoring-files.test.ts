// The shipped monitoring files agree with each other: one copy of the rules, one dashboard, the variables used.
import { lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadYaml, type V1ConfigMap } from "@kubernetes/client-node";
import { expect } from "chai";
import { Registry } from "prom-client";
import { createMetrics } from "../../../src/observe/metrics.js";
import { createTaintMetrics } from "../../../src/prevent/taint-metrics.js";
import { repositoryFile } from "../../harness/binaries.js";
import {
  dashboardPanels,
  dashboardQueries,
  dashboardShows,
  exposedFamilies,
  MONITORING_SOURCES,
  metricSelectors,
  monitoringDir,
  monitoringSource,
  readDashboard,
  unaccountedMetrics,
  unpanelledMetrics,
} from "../../harness/monitoring-files.js";

const dir = monitoringDir();
const read = (name: string) => readFileSync(join(dir, name), "utf8");

describe("monitoring files", () => {
  it("the chart's files are real files, and manifests/monitoring's copies are byte for byte the same (make manifests)", () => {
    for (const name of MONITORING_SOURCES) {
      const source = monitoringSource(name);
      // A link out of the chart would leave a packaged or vendored chart with an empty PrometheusRule or dashboard.
      expect(lstatSync(source).isFile(), `${source} is a regular file`).to.equal(true);
      expect(readFileSync(source, "utf8").length, source).to.be.greaterThan(1000);
      expect(read(name), `manifests/monitoring/${name}: run make manifests`).to.equal(readFileSync(source, "utf8"));
    }
  });

  it("prometheus-rule.yaml wraps alerts.yaml: the PrometheusRule's spec is the rules file's content", () => {
    const rule = loadYaml<{ kind: string; spec: unknown }>(read("prometheus-rule.yaml"));
    expect(rule.kind).to.equal("PrometheusRule");
    expect(rule.spec, "run make manifests").to.deep.equal(loadYaml(read("alerts.yaml")));
  });

  it("kustomization.yaml lists the generated objects; the dashboard ConfigMap holds dashboard.json, with the sidecar's label", () => {
    const kustomization = read("kustomization.yaml");
    for (const file of ["service-monitor.yaml", "prometheus-rule.yaml", "dashboard.yaml"]) {
      expect(kustomization).to.include(`- ${file}`);
    }
    const configMap = loadYaml<V1ConfigMap>(read("dashboard.yaml"));
    expect(configMap.metadata?.labels).to.include({ grafana_dashboard: "1" });
    expect(configMap.data?.["cni-repair.json"], "run make manifests").to.equal(read("dashboard.json"));
  });

  it("the dashboard has the datasource, cluster, job, namespace and pod variables, and every query uses them", () => {
    const dashboard = readDashboard();
    const variables = dashboard.templating.list;
    expect(variables.map((v) => `${v.name}:${v.type}`)).to.deep.equal([
      "datasource:datasource",
      "cluster:query",
      "job:query",
      "namespace:query",
      "pod:query",
    ]);
    for (const variable of variables.slice(1)) {
      expect(variable, variable.name).to.include({ includeAll: true, multi: true });
    }
    expect(JSON.stringify(variables.find((v) => v.name === "cluster")?.query)).to.include(
      "label_values(cni_repair_build_info, cluster)",
    );
    for (const panel of dashboardPanels(dashboard)) {
      expect(panel.targets, panel.title).to.not.be.empty;
      for (const target of panel.targets ?? []) {
        // Grafana's syntax for the datasource variable, not a template literal.
        expect(target.datasource?.uid, panel.title).to.equal(`$\{datasource}`);
        // The job comes from the variable: no query names one.
        expect(target.expr, panel.title).to.not.match(/job=~?"[^$]/);
        for (const selector of metricSelectors(target.expr)) {
          for (const variable of ["cluster", "job", "namespace", "pod"]) {
            expect(selector, `${panel.title}: ${target.expr}`).to.include(`${variable}=~"$${variable}"`);
          }
        }
      }
    }
  });

  it("every metric the controller registers (startup taints included) is in a panel or in docs/metrics.md's deliberately unpanelled list", async () => {
    const registry = new Registry();
    createMetrics(registry, { ruleNames: ["istio"], version: "test", ruleActions: { istio: "delete" } });
    // Features that register metrics of their own when they are on.
    createTaintMetrics(registry, ["cni.istio.io/not-ready"], {
      taintedNodes: () => 0,
      heldNodes: () => 0,
      longestSeconds: () => 0,
    });
    const families = exposedFamilies(await registry.metrics());
    expect(families.length).to.be.greaterThan(30);
    const unpanelled = unpanelledMetrics(readFileSync(repositoryFile("docs/metrics.md"), "utf8"));
    expect(unaccountedMetrics(families, readDashboard(), unpanelled)).to.deep.equal([]);
    // The list stays honest: nothing in it is on the dashboard after all.
    expect(unpanelled.filter((family) => dashboardShows(readDashboard(), family))).to.deep.equal([]);
  });

  it("the unpanelled check names what to do, and fails for a metric that is nowhere", () => {
    const [message] = unaccountedMetrics(["workqueue_adds_total"], readDashboard(), []);
    expect(message).to.include("workqueue_adds_total");
    expect(message).to.include("charts/cni-repair/files/dashboard.json");
    expect(message).to.include('"Deliberately unpanelled"');
    expect(unaccountedMetrics(["cni_repair_repair_latency_seconds"], readDashboard(), [])).to.deep.equal([]);
  });

  it("the dashboard shows what the README promises", () => {
    const exprs = dashboardQueries(readDashboard()).map((query) => query.expr);
    const shown = (pattern: RegExp) => exprs.some((expr) => pattern.test(expr));
    const promised: Record<string, RegExp> = {
      "repairs per type/result": /sum by \(type, result\) \(rate\(cni_repair_pods_repaired_total/,
      "broken pods by rule": /sum by \(rule\) \(cni_repair_broken_pods/,
      "holds by reason": /sum by \(reason\) \(cni_repair_pods_held/,
      "repair latency percentiles": /histogram_quantile\(0\.99, .*cni_repair_repair_latency_seconds_bucket/,
      "queue depth": /workqueue_depth/,
      "watch restarts": /cni_repair_watch_restarts_total/,
      "sync age": /time\(\) - .*cni_repair_last_sync_timestamp_seconds/,
      "dry runs apart from repairs": /cni_repair_pods_repaired_total\{[^}]*result!="dry_run"/,
      "dry runs": /cni_repair_pods_repaired_total\{[^}]*result="dry_run"/,
      "event write failures": /cni_repair_events_failed_total/,
      "watch restarts by cause": /sum by \(reason\) \(increase\(cni_repair_watch_restarts_total/,
      "acting instances per install, not per pod": /sum by \(cluster, namespace\) \(cni_repair_leader\{/,
      memory: /process_resident_memory_bytes/,
      cpu: /rate\(process_cpu_seconds_total/,
    };
    for (const [what, pattern] of Object.entries(promised)) expect(shown(pattern), what).to.equal(true);
  });

  it("dashboard panels have unique ids and do not overlap on the 24-column grid", () => {
    const panels = readDashboard().panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
    expect(new Set(panels.map((panel) => panel.id)).size).to.equal(panels.length);
    const cells = new Map<string, string>();
    for (const { title, gridPos } of panels) {
      expect(gridPos.x + gridPos.w, title).to.be.at.most(24);
      for (let x = gridPos.x; x < gridPos.x + gridPos.w; x++) {
        for (let y = gridPos.y; y < gridPos.y + gridPos.h; y++) {
          expect(cells.get(`${x},${y}`), `${title} overlaps`).to.equal(undefined);
          cells.set(`${x},${y}`, title);
        }
      }
    }
  });
});
