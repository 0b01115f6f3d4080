// test/monitoring/alerts.promtool.yaml covers every shipped alert: for each alert and severity, a case where it
// fires and one where it stays quiet. (test/integration/monitoring/alert-rules.test.ts runs promtool on it.)
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { loadYaml } from "@kubernetes/client-node";
import { expect } from "chai";
import { repositoryFile } from "../../harness/binaries.js";
import { monitoringSource, readAlertRules } from "../../harness/monitoring-files.js";

type AlertCase = { alertname: string; eval_time: string; exp_alerts?: { exp_labels?: Record<string, string> }[] };
type PromtoolTests = { rule_files: string[]; tests: { name: string; alert_rule_test?: AlertCase[] }[] };

const testsFile = repositoryFile("test/monitoring/alerts.promtool.yaml");
const promtoolTests = loadYaml<PromtoolTests>(readFileSync(testsFile, "utf8"));
const cases = promtoolTests.tests.flatMap((test) =>
  (test.alert_rule_test ?? []).map((check) => ({ test: test.name, ...check })),
);
const severitiesExpected = (check: AlertCase) => (check.exp_alerts ?? []).map((alert) => alert.exp_labels?.severity);

describe("the promtool tests of the alerts", () => {
  it("test the shipped rules file", () => {
    expect(promtoolTests.rule_files.map((file) => resolve(dirname(testsFile), file))).to.deep.equal([
      monitoringSource("alerts.yaml"),
    ]);
  });

  it("name only alerts that exist", () => {
    const alerts = new Set(readAlertRules().map((rule) => rule.alert));
    for (const check of cases) expect(alerts.has(check.alertname), `${check.test}: ${check.alertname}`).to.equal(true);
  });

  for (const rule of readAlertRules()) {
    const { alert } = rule;
    const { severity } = rule.labels;
    const own = cases.filter((check) => check.alertname === alert);
    const hint = `add an alert_rule_test for ${alert} (severity ${severity}) to test/monitoring/alerts.promtool.yaml`;

    it(`${alert} (${severity}) has a case where it fires`, () => {
      expect(
        own.some((check) => severitiesExpected(check).includes(severity)),
        hint,
      ).to.equal(true);
    });

    it(`${alert} (${severity}) has a case where it stays quiet`, () => {
      expect(
        own.some((check) => !severitiesExpected(check).includes(severity)),
        hint,
      ).to.equal(true);
    });
  }
});
