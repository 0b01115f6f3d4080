// `promtool test rules` on the shipped alerts: the storm alert fires for a breaker held open (issue 12, acceptance
// 3), only on the acting instance, and not before its `for`; the failing-repairs alert ignores throttled repairs.
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadYaml } from "@kubernetes/client-node";
import { expect } from "chai";
import { monitoringDir } from "../../harness/monitoring-files.js";
import { ownedTempDir } from "../../harness/owned-dirs.js";
import { requirePrometheusBinaries } from "../../harness/prometheus.js";

type AlertRule = { alert?: string; annotations?: Record<string, string> };

/** The rule as shipped, its annotations rendered for a value of 1 in namespace cni-repair (their templates). */
function shippedAnnotations(alertsFile: string, alert: string): Record<string, string> {
  const file = loadYaml<{ groups: { rules: AlertRule[] }[] }>(readFileSync(alertsFile, "utf8"));
  const rule = file.groups.flatMap((group) => group.rules).find((r) => r.alert === alert);
  if (!rule) throw new Error(`${alert} is not in ${alertsFile}`);
  return Object.fromEntries(
    Object.entries(rule.annotations ?? {}).map(([key, text]) => [
      key,
      text.replaceAll("{{ $value }}", "1").replaceAll("{{ $labels.namespace }}", "cni-repair"),
    ]),
  );
}

/** Runs `promtool test rules` on the tests (rule_files included) and expects SUCCESS. */
function expectPromtoolSuccess(name: string, tests: unknown): void {
  const { promtool } = requirePrometheusBinaries();
  const dir = ownedTempDir("promtool-");
  const testFile = join(dir, `${name}.test.yaml`);
  // JSON is YAML: promtool reads it as is.
  writeFileSync(testFile, JSON.stringify(tests, null, 2));
  try {
    const output = execFileSync(promtool, ["test", "rules", testFile], { encoding: "utf8" });
    expect(output).to.match(/SUCCESS/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const series = (name: string, instance: string, values: string, extra = "") => ({
  series: `${name}{job="cni-repair",namespace="cni-repair",instance="${instance}"${extra}}`,
  values,
});

describe("alert rules under promtool test rules", () => {
  it("CniRepairStormBreakerOpen fires once a node breaker has been open on the leader for 2m, never on a standby", () => {
    const alertsFile = join(monitoringDir(), "alerts.yaml");
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
    expectPromtoolSuccess("storm-alert", tests);
  });

  it("CniRepairRepairsFailing never fires for throttled repairs (429 with Retry-After), and does for failed ones", () => {
    const alertsFile = join(monitoringDir(), "alerts.yaml");
    const repaired = (result: string, values: string) =>
      series("cni_repair_pods_repaired_total", "leader:8080", values, `,type="delete",result="${result}"`);
    const exhausted = series("cni_repair_retries_exhausted_total", "leader:8080", "0x60");
    const firing = {
      exp_labels: { severity: "warning", job: "cni-repair", namespace: "cni-repair" },
      exp_annotations: shippedAnnotations(alertsFile, "CniRepairRepairsFailing"),
    };
    expectPromtoolSuccess("repairs-failing-alert", {
      rule_files: [alertsFile],
      evaluation_interval: "30s",
      tests: [
        {
          // An API server throttling hard for half an hour: nine throttled answers for every repair that went
          // through, and not one failure.
          interval: "30s",
          input_series: [
            repaired("throttled", "0+9x60"),
            repaired("success", "0+1x60"),
            repaired("fail", "0x60"),
            exhausted,
          ],
          alert_rule_test: [{ eval_time: "30m", alertname: "CniRepairRepairsFailing", exp_alerts: [] }],
        },
        {
          // The same numbers as failures: the alert fires.
          interval: "30s",
          input_series: [
            repaired("fail", "0+9x60"),
            repaired("success", "0+1x60"),
            repaired("throttled", "0x60"),
            exhausted,
          ],
          alert_rule_test: [{ eval_time: "30m", alertname: "CniRepairRepairsFailing", exp_alerts: [firing] }],
        },
      ],
    });
  });
});
