// The shipped dashboard and alerts, evaluated by a real Prometheus scraping a real controller during a repair scenario.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { repositoryFile } from "../../harness/binaries.js";
import { ControllerProcess } from "../../harness/controller-process.js";
import {
  dashboardQueries,
  exposedFamilies,
  metricSelectors,
  monitoringSource,
  readDashboard,
  substituteVariables,
  unaccountedMetrics,
  unpanelledMetrics,
} from "../../harness/monitoring-files.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { isAlive } from "../../harness/owned-dirs.js";
import { Prometheus, requirePrometheusBinaries } from "../../harness/prometheus.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { createBrokenPods, createHealthyCluster, leaseHeldElsewhere, refuseDeletes } from "./scenario.js";

const JOB = "cni-repair";
const POD = "cni-repair-7f9c-abcde";
/** The cluster label a fleet's Prometheus (or its remote-write) adds; the dashboard's cluster variable reads it. */
const CLUSTER = "test-cluster";
/** The dashboard's variables as Grafana fills them for this one target. */
const VALUES = {
  clusters: [CLUSTER],
  jobs: [JOB],
  namespaces: ["cni-repair"],
  pods: [POD],
  rateInterval: "1m",
  range: "5m",
};
const STORM_PODS = 3;
/** The alerts (name/severity) the scenario, in delete mode, makes true while the controller runs, and the others. */
const FIRING = [
  "CniRepairBrokenPodsNotRepaired/critical",
  "CniRepairRepairsFailing/warning",
  "CniRepairStormBreakerOpen/critical",
  "CniRepairCniAgentNotReady/warning",
];
const QUIET = [
  "CniRepairControllerDown/warning",
  // One target, up; no kube-state-metrics here (its DaemonSet series are promtool's to test).
  "CniRepairInstanceDown/warning",
  "CniRepairDaemonSetPodsUnavailable/warning",
  // Istio's repair is ignored here (--istio-repair=ignore): nothing is left to it, and its settings are not unknown.
  "CniRepairBrokenPodsHeldForIstio/critical",
  "CniRepairIstioRepairUnknown/warning",
  "CniRepairNoLeader/warning",
  "CniRepairWatchNotSynced/warning",
  "CniRepairBrokenPodsAwaitingHuman/warning",
  "CniRepairStormBreakerOpen/warning",
  // The scenario manages startup taints (bootstrap-only) on nodes that carry none.
  "CniRepairStartupTaintNotRemoved/warning",
  "CniRepairStartupTaintAgentNeverReady/warning",
];
/** Selectors of the rules that match nothing in delete mode, by design (promtool's unit tests cover them). */
const LABEL_AND_REPORT_ONLY = ['cni_repair_rule_info{action=~"label|report"}'];
const ruleKey = (name: string, labels: Record<string, string> | undefined) => `${name}/${labels?.severity}`;

describe("monitoring: dashboard and alerts on a real Prometheus", function () {
  this.timeout(180_000);
  const alertsFile = monitoringSource("alerts.yaml");
  let namespace: string;
  let controller: ControllerProcess | undefined;
  let prometheus: Prometheus | undefined;
  let allowDeletes: (() => Promise<void>) | undefined;
  let failed = true;

  before(async () => {
    requirePrometheusBinaries();
    const api = controlPlane().kubeConfig().makeApiClient(CoreV1Api);
    namespace = await createTestNamespace(api, "mon");
    allowDeletes = await refuseDeletes(controlPlane(), namespace);
    await createHealthyCluster(api, namespace, 14);
    // Another replica holds the Lease: our controller starts as a standby.
    const lease = await leaseHeldElsewhere(controlPlane(), namespace, "cni-repair");
    controller = await ControllerProcess.start({
      args: [
        `--kubeconfig=${controlPlane().kubeconfigPath}`,
        `--field-selector=metadata.namespace=${namespace}`,
        `--cni-agent-namespace=${namespace}`,
        "--preset=istio,linkerd",
        // The test's CNI agents are not Istio's: nothing repairs in place (see e2e-controller.ts).
        "--istio-repair=ignore",
        "--leader-elect=true",
        `--leader-election-namespace=${namespace}`,
        "--retry-period=500ms",
        "--max-retries=2",
        "--retry-base-delay=100ms",
        `--storm-min-broken=${STORM_PODS}`,
        // No node carries a startup taint here: on only so that its metrics are scraped like every other.
        "--startup-taint=bootstrap-only",
      ],
      waitReady: false,
    });
    await waitFor("the controller's /metrics", async () => (await controller?.get("/metrics"))?.status === 200, {
      timeoutMs: 20_000,
    });
    const address = new URL(controller.url).host;
    prometheus = await Prometheus.start({
      job: JOB,
      // The labels a ServiceMonitor gives the target: the dashboard's variables select on them.
      targets: [{ address, labels: { cluster: CLUSTER, namespace: "cni-repair", pod: POD } }],
      ruleFiles: [alertsFile],
    });
    await waitFor(
      "a first scrape",
      async () => ((await prometheus?.series(`cni_repair_leader{job="${JOB}"}`))?.length ?? 0) > 0,
    );
    await createBrokenPods(api, namespace, STORM_PODS);

    // Standby: nobody repairs, and the no-leader alert's expression sees it.
    const noLeader = await waitFor("the no-leader expression", async () => {
      const rule = (await prometheus?.rules())?.find((r) => r.name === "CniRepairNoLeader");
      return rule && (await prometheus?.series(rule.query))?.length === 1;
    });
    expect(noLeader).to.equal(true);
    expect(await controller.metric("cni_repair_pods_repaired_total", { type: "delete", result: "success" })).to.equal(
      0,
    );

    await lease.release();
    await waitFor("leadership", async () => (await controller?.metric("cni_repair_leader")) === 1, {
      timeoutMs: 20_000,
    });
    const metric = (name: string, labels: Record<string, string> = {}) => controller?.metric(name, labels) ?? 0;
    await waitFor(
      "the scenario: repairs, failures given up, holds of every kind",
      async () =>
        (await metric("cni_repair_pods_repaired_total", { type: "delete", result: "success" })) >= 2 &&
        (await metric("cni_repair_retries_exhausted_total")) >= 1 &&
        (await metric("cni_repair_pods_held", { reason: "terminal" })) === 1 &&
        (await metric("cni_repair_pods_held", { reason: "bare_pod" })) === 1 &&
        (await metric("cni_repair_pods_held", { reason: "cni_agent_not_ready" })) === 1 &&
        (await metric("cni_repair_pods_held", { reason: "storm" })) === STORM_PODS,
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    // A few more scrapes, so rates over the scenario have samples on both sides of every change.
    const scraped = Date.now() / 1000;
    await waitFor(
      "scrapes after the scenario",
      async () => {
        const [sample] = (await prometheus?.series(`timestamp(cni_repair_build_info{job="${JOB}"})`)) ?? [];
        return sample !== undefined && sample.value > scraped + 2;
      },
      { timeoutMs: 15_000, intervalMs: 250 },
    );
    failed = false;
  });

  afterEach(function () {
    if (this.currentTest?.state === "failed") failed = true;
  });

  after(async () => {
    if (failed) {
      console.log(controller?.output());
      console.log(prometheus?.logTail());
    }
    await controller?.stop();
    const pid = prometheus?.pid;
    const dir = prometheus?.dir;
    await prometheus?.stop();
    await allowDeletes?.();
    // Torn down: no Prometheus process, no directory.
    if (pid !== undefined) expect(isAlive(pid)).to.equal(false);
    if (dir !== undefined) expect(existsSync(dir)).to.equal(false);
  });

  it("promtool accepts the alerting rules", () => {
    const { promtool } = requirePrometheusBinaries();
    const output = execFileSync(promtool, ["check", "rules", alertsFile], { encoding: "utf8" });
    expect(output).to.include(`SUCCESS: ${FIRING.length + QUIET.length} rules found`);
  });

  it("promtool check metrics passes on a live scrape of the controller", async () => {
    const { promtool } = requirePrometheusBinaries();
    const scrape = await controller?.get("/metrics");
    expect(scrape?.status).to.equal(200);
    expect(scrape?.body).to.include("cni_repair_pods_repaired_total");
    // promtool prints its findings and exits non-zero (3: lint problems); the test fails with them.
    try {
      execFileSync(promtool, ["check", "metrics"], { input: scrape?.body, encoding: "utf8", stdio: "pipe" });
    } catch (error) {
      const failed = error as { stdout?: string; stderr?: string };
      expect.fail(`promtool check metrics:\n${failed.stdout ?? ""}${failed.stderr ?? ""}`);
    }
  });

  it("every dashboard panel query parses and returns series, and the selectors in it match", async () => {
    const values = VALUES;
    const queries = dashboardQueries(readDashboard());
    expect(queries.length).to.be.greaterThan(20);
    for (const { name, expr } of queries) {
      const query = substituteVariables(expr, values);
      expect(query, name).to.not.include("$");
      const series = await prometheus?.series(query);
      expect(series, `${name}: ${query}`).to.not.be.empty;
      for (const selector of metricSelectors(query)) {
        expect(await prometheus?.series(selector), `${name}: ${selector}`).to.not.be.empty;
      }
    }
  });

  it("the panels show the scenario: repairs, broken pods, holds by reason, latency, leader", async () => {
    const values = VALUES;
    const panel = async (name: string) => {
      const query = dashboardQueries(readDashboard()).find((q) => q.name === name);
      if (!query) throw new Error(`no panel query ${name}`);
      return (await prometheus?.series(substituteVariables(query.expr, values))) ?? [];
    };
    const by = (series: { metric: Record<string, string>; value: number }[], label: string) =>
      Object.fromEntries(series.map((s) => [s.metric[label], s.value]));

    const repairs = await panel("Repairs by type and result / A");
    expect(repairs.map((s) => s.metric.result)).to.not.include("dry_run");
    expect(await panel("Dry runs / A")).to.deep.equal([
      { metric: { cluster: CLUSTER, namespace: "cni-repair" }, value: 0 },
    ]);
    expect(by(await panel("Watch restarts by cause / A"), "reason")).to.have.keys(
      "timeout",
      "gone",
      "error",
      "stalled",
      "quiet",
    );
    expect((await panel("Event write failures / A")).map((s) => s.metric)).to.deep.equal([
      { cluster: CLUSTER, namespace: "cni-repair" },
    ]);
    const deleteRate = (result: string) =>
      repairs.find((s) => s.metric.type === "delete" && s.metric.result === result)?.value ?? 0;
    expect(deleteRate("success")).to.be.greaterThan(0);
    expect(deleteRate("fail")).to.be.greaterThan(0);
    expect(by(await panel("Broken pods by rule / A"), "rule")).to.deep.include({ linkerd: 0 });
    expect(by(await panel("Broken pods by rule / A"), "rule").istio).to.be.at.least(1 + 1 + 1 + 1 + STORM_PODS);
    expect(by(await panel("Pods held by reason / A"), "reason")).to.deep.include({
      terminal: 1,
      bare_pod: 1,
      cni_agent_not_ready: 1,
      storm: STORM_PODS,
      rate_limit: 0,
    });
    // Only reasons something is held for now (not rate_limit, at 0), each for as long as the scenario has held it.
    const longest = by(await panel("Longest hold by reason / A"), "reason");
    expect(longest).to.include.keys("terminal", "bare_pod", "cni_agent_not_ready", "storm");
    expect(longest).to.not.have.property("rate_limit");
    for (const seconds of Object.values(longest)) expect(seconds).to.be.within(0.001, 120);
    expect(by(await panel("Storm breakers open / A"), "scope")).to.deep.equal({ node: 1, cluster: 0 });
    const [p50] = await panel("Repair latency / A");
    expect(p50?.value).to.be.within(0, 60);
    // One series per install, whatever the number of pods: here the one leader.
    expect(await panel("Acting instances / A")).to.deep.equal([
      { metric: { cluster: CLUSTER, namespace: "cni-repair" }, value: 1 },
    ]);
    expect(await panel("Rules and their action / A")).to.have.deep.members([
      { metric: { cluster: CLUSTER, namespace: "cni-repair", rule: "istio", action: "delete" }, value: 1 },
      { metric: { cluster: CLUSTER, namespace: "cni-repair", rule: "linkerd", action: "delete" }, value: 1 },
    ]);
    expect((await panel("Instances up / A"))[0]?.value).to.equal(1);
    expect((await panel("Sync age / A"))[0]?.value).to.be.within(0, 60);
    expect((await panel("Memory / A"))[0]?.value).to.be.greaterThan(10 * 1024 * 1024);
  });

  it("every metric the controller exports is in a dashboard panel or in docs/metrics.md's deliberately unpanelled list", async () => {
    const scrape = await controller?.get("/metrics");
    const families = exposedFamilies(scrape?.body ?? "");
    expect(families).to.include.members(["cni_repair_pods_repaired_total", "process_resident_memory_bytes"]);
    const unpanelled = unpanelledMetrics(readFileSync(repositoryFile("docs/metrics.md"), "utf8"));
    const unaccounted = unaccountedMetrics(families, readDashboard(), unpanelled);
    expect(unaccounted, unaccounted.join("\n")).to.deep.equal([]);
  });

  it("every alert loads and evaluates in Prometheus; the scenario's alerts fire, the others stay quiet", async () => {
    const rules = (await prometheus?.rules()) ?? [];
    expect(rules.map((rule) => ruleKey(rule.name, rule.labels)).sort()).to.deep.equal([...FIRING, ...QUIET].sort());
    for (const rule of rules) {
      const key = ruleKey(rule.name, rule.labels);
      expect(rule.health, `${key}: ${rule.lastError}`).to.equal("ok");
      for (const selector of metricSelectors(rule.query).filter((s) => !LABEL_AND_REPORT_ONLY.includes(s))) {
        expect(await prometheus?.series(selector), `${key}: ${selector}`).to.not.be.empty;
      }
      const series = (await prometheus?.series(rule.query)) ?? [];
      if (FIRING.includes(key)) expect(series, `${key}: ${rule.query}`).to.have.length(1);
      else expect(series, `${key}: ${rule.query}`).to.deep.equal([]);
    }
    // Prometheus' own evaluation agrees: the firing ones are pending (their `for:` has not passed yet).
    const { alerts } = await waitFor("the pending alerts", async () => {
      const response = await fetch(`${prometheus?.url}/api/v1/alerts`);
      const body = (await response.json()) as {
        data: { alerts: { labels: { alertname: string; severity: string }; state: string }[] };
      };
      return body.data.alerts.length === FIRING.length && { alerts: body.data.alerts };
    });
    expect(alerts.map((alert) => ruleKey(alert.labels.alertname, alert.labels)).sort()).to.deep.equal(
      [...FIRING].sort(),
    );
    for (const alert of alerts) {
      expect(alert.state).to.equal("pending");
      expect(alert.labels).to.have.property("severity");
    }
  });

  it("the controller-down alert's expression fires once the controller stops", async () => {
    expect(await controller?.stop()).to.equal(0);
    await waitFor("a failed scrape", async () => (await prometheus?.series(`up{job="${JOB}"} == 0`))?.length === 1);
    const rule = (await prometheus?.rules())?.find((r) => r.name === "CniRepairControllerDown");
    expect(await prometheus?.series(rule?.query ?? "")).to.have.length(1);
  });
});
