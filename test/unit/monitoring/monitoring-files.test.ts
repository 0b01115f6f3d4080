// The shipped monitoring files agree with each other: one copy of the rules, one dashboard, the variables used.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadYaml, type V1ConfigMap } from "@kubernetes/client-node";
import { expect } from "chai";
import {
  dashboardPanels,
  dashboardQueries,
  metricSelectors,
  monitoringDir,
  readDashboard,
} from "../../harness/monitoring-files.js";

const dir = monitoringDir();
const read = (name: string) => readFileSync(join(dir, name), "utf8");

describe("monitoring files", () => {
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

  it("the dashboard has the datasource, namespace and pod variables, and every query uses them", () => {
    const dashboard = readDashboard();
    expect(dashboard.templating.list.map((v) => `${v.name}:${v.type}`)).to.deep.equal([
      "datasource:datasource",
      "namespace:query",
      "pod:query",
    ]);
    for (const panel of dashboardPanels(dashboard)) {
      expect(panel.targets, panel.title).to.not.be.empty;
      for (const target of panel.targets ?? []) {
        // Grafana's syntax for the datasource variable, not a template literal.
        expect(target.datasource?.uid, panel.title).to.equal(`$\{datasource}`);
        for (const selector of metricSelectors(target.expr)) {
          expect(selector, `${panel.title}: ${target.expr}`).to.include('namespace="$namespace"');
          expect(selector, `${panel.title}: ${target.expr}`).to.include('pod=~"$pod"');
        }
      }
    }
  });

  it("the dashboard shows what the README promises", () => {
    const exprs = dashboardQueries(readDashboard()).map((query) => query.expr);
    const shown = (pattern: RegExp) => exprs.some((expr) => pattern.test(expr));
    const promised: Record<string, RegExp> = {
      "repairs per type/result": /sum by \(type, result\) \(rate\(cni_repair_pods_repaired_total/,
      "broken pods by rule": /sum by \(rule\) \(cni_repair_broken_pods/,
      "holds by reason": /sum by \(reason\) \(cni_repair_pods_held/,
      "repair latency percentiles": /histogram_quantile\(0\.99, .*cni_repair_repair_latency_seconds_bucket/,
      "queue depth": /cni_repair_queue_depth/,
      "watch restarts": /cni_repair_watch_restarts_total/,
      "sync age": /time\(\) - .*cni_repair_last_sync_timestamp_seconds/,
      leader: /cni_repair_leader/,
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
