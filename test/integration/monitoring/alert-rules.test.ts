// `promtool test rules` on the shipped alerts: the storm alert fires for a breaker held open (issue 12, acceptance
// 3), only on the acting instance, and not before its `for`.
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadYaml } from "@kubernetes/client-node";
import { expect } from "chai";
import { monitoringDir } from "../../harness/monitoring-files.js";
import { ownedTempDir } from "../../harness/owned-dirs.js";
import { requirePrometheusBinaries } from "../../harness/prometheus.js";

type AlertRule = { alert?: string; annotations?: Record<string, string> };

/** The rule as shipped, its annotations rendered for a value of 1 (the only template they use). */
function shippedAnnotations(alertsFile: string, alert: string): Record<string, string> {
  const file = loadYaml<{ groups: { rules: AlertRule[] }[] }>(readFileSync(alertsFile, "utf8"));
  const rule = file.groups.flatMap((group) => group.rules).find((r) => r.alert === alert);
  if (!rule) throw new Error(`${alert} is not in ${alertsFile}`);
  return Object.fromEntries(
    Object.entries(rule.annotations ?? {}).map(([key, text]) => [key, text.replaceAll("{{ $value }}", "1")]),
  );
}

describe("alert rules under promtool test rules", () => {
  it("CniRepairStormBreakerOpen fires once a node breaker has been open on the leader for 2m, never on a standby", () => {
    const { promtool } = requirePrometheusBinaries();
    const alertsFile = join(monitoringDir(), "alerts.yaml");
    const series = (name: string, instance: string, values: string, extra = "") => ({
      series: `${name}{job="cni-repair",namespace="cni-repair",instance="${instance}"${extra}}`,
      values,
    });
    const firing = {
      exp_labels: { severity: "critical", job: "cni-repair", namespace: "cni-repair" },
      exp_annotations: shippedAnnotations(alertsFile, "CniRepairStormBreakerOpen"),
    };
    const tests = {
      rule_files: [alertsFile],
      evaluation_interval: "30s",
      tests: [
        {
          interval: "30s",
          input_series: [
            // The leader: its node breaker opens at 1m and stays open.
            series("cni_repair_leader", "leader:8080", "1x20"),
            series("cni_repair_storm_breaker_open", "leader:8080", "0 0 1x18", ',scope="node"'),
            series("cni_repair_storm_breaker_open", "leader:8080", "0x20", ',scope="cluster"'),
            // A standby that sees the same wave counts for nothing.
            series("cni_repair_leader", "standby:8080", "0x20"),
            series("cni_repair_storm_breaker_open", "standby:8080", "1x20", ',scope="node"'),
          ],
          alert_rule_test: [
            { eval_time: "2m", alertname: "CniRepairStormBreakerOpen", exp_alerts: [] },
            { eval_time: "3m30s", alertname: "CniRepairStormBreakerOpen", exp_alerts: [firing] },
          ],
        },
      ],
    };
    const dir = ownedTempDir("promtool-");
    const testFile = join(dir, "storm-alert.test.yaml");
    // JSON is YAML: promtool reads it as is.
    writeFileSync(testFile, JSON.stringify(tests, null, 2));
    try {
      const output = execFileSync(promtool, ["test", "rules", testFile], { encoding: "utf8" });
      expect(output).to.match(/SUCCESS/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
