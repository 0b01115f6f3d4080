// The chart's opt-in repair CronJob as helm renders it (issue 32, item 6): off by default; on, one pass of
// `scan --repair` with every controller flag scan takes (checked against the controller's own flag table and
// parser), the mode's ServiceAccount, the controller pod's image, sizing and security context, no service links,
// and the schedule's guards (Forbid, no retry, deadlines, history); refused in per-node mode. Its pods are not the
// metrics Service's endpoints. That a Job of it starts and repairs is test/integration/e2e/repair-cronjob.test.ts.
import type { V1CronJob, V1Service } from "@kubernetes/client-node";
import { expect } from "chai";
import { parseConfig } from "../../../src/config/config.js";
import { type FlagName, flags } from "../../../src/config/flags.js";
import { chartDir, IMAGE_VALUES, renderChart, runHelm, setValues } from "../../harness/helm.js";
import { controllerContainer, objectsOfKind, podCommand, workloadOf } from "../../harness/overlays.js";

const PLACEMENT = { namespace: "cni-repair", nodeName: "node-a", podName: "cni-repair-repair-x" };
const MODES = { cluster: "delete", "label-only": "label", "dry-run": "report" } as const;

/** Values across the groups, so that run's and scan's lines differ by more than the defaults. */
const VALUES = {
  "cronJob.enabled": "true",
  presets: "{istio,linkerd}",
  "scope.excludeNamespaces": "{kube-system}",
  "limits.maxDeletionsPerMinute": "30",
  "limits.workers": "2",
  "cniAgent.minReady": "20s",
  "startupTaint.mode": "bootstrap-only",
  "startupTaint.maxShare": "0.3",
  logLevel: "debug",
};

const flagOf = (arg: string) => /^--([a-z0-9-]+)=/.exec(arg)?.[1] as FlagName | undefined;

describe("chart: the repair CronJob", function () {
  this.timeout(10 * 60_000);

  it("is not rendered unless cronJob.enabled", async () => {
    for (const mode of Object.keys(MODES) as (keyof typeof MODES)[]) {
      expect(objectsOfKind(await renderChart(mode), "CronJob"), mode).to.deep.equal([]);
    }
  });

  for (const [mode, controllerMode] of Object.entries(MODES) as [keyof typeof MODES, string][]) {
    it(`${mode}: scan --repair with the controller's flags that scan takes, as the controller's pod, scheduled safely`, async () => {
      const rendered = await renderChart(mode, VALUES);
      const [cronJob, ...more] = objectsOfKind<V1CronJob>(rendered, "CronJob");
      expect(more).to.deep.equal([]);
      const spec = cronJob?.spec;
      expect(cronJob?.metadata?.name).to.equal("cni-repair-repair");
      expect({
        schedule: spec?.schedule,
        concurrencyPolicy: spec?.concurrencyPolicy,
        startingDeadlineSeconds: spec?.startingDeadlineSeconds,
        successfulJobsHistoryLimit: spec?.successfulJobsHistoryLimit,
        failedJobsHistoryLimit: spec?.failedJobsHistoryLimit,
        backoffLimit: spec?.jobTemplate.spec?.backoffLimit,
        activeDeadlineSeconds: spec?.jobTemplate.spec?.activeDeadlineSeconds,
        restartPolicy: spec?.jobTemplate.spec?.template.spec?.restartPolicy,
      }).to.deep.equal({
        schedule: "*/10 * * * *",
        concurrencyPolicy: "Forbid",
        startingDeadlineSeconds: 300,
        successfulJobsHistoryLimit: 3,
        failedJobsHistoryLimit: 3,
        backoffLimit: 0,
        activeDeadlineSeconds: 600,
        restartPolicy: "Never",
      });

      const pod = spec?.jobTemplate.spec?.template.spec;
      const workloadPod = workloadOf(rendered).spec?.template.spec;
      expect(pod?.enableServiceLinks).to.equal(false);
      for (const field of [
        "serviceAccountName",
        "automountServiceAccountToken",
        "priorityClassName",
        "securityContext",
      ] as const) {
        expect(pod?.[field], field).to.deep.equal(workloadPod?.[field]);
      }
      const container = pod?.containers[0];
      const controller = controllerContainer(rendered);
      if (!container) throw new Error("no container");
      expect(container.image).to.equal(controller.image);
      expect(container.securityContext).to.deep.equal(controller.securityContext);
      expect(container.resources).to.deep.equal(controller.resources);
      expect(container.ports ?? []).to.deep.equal([]);

      // The line: scan, the controller's --preset (still args[1]), --repair, and of run's flags exactly those scan takes.
      const pass = podCommand(container, PLACEMENT);
      const run = podCommand(controller, { ...PLACEMENT, podName: "cni-repair-0" });
      expect(pass.args.slice(0, 2)).to.deep.equal(["scan", run.args[1]]);
      const scanTakes = (arg: string) => {
        const name = flagOf(arg);
        return name !== undefined && flags[name].commands.includes("scan");
      };
      expect(pass.args.filter((arg) => arg !== "--repair").slice(1)).to.deep.equal(run.args.slice(1).filter(scanTakes));
      expect(pass.env.CNI_REPAIR_MODE).to.equal(controllerMode);
      expect(pass.env.NODE_OPTIONS).to.equal(run.env.NODE_OPTIONS);
      const { command, config } = parseConfig(pass.args, pass.env);
      expect(command).to.equal("scan");
      expect(config.scan.repair).to.equal(true);
      expect(config.mode).to.equal(controllerMode);
      expect(config.limits.deletionsPerMinute).to.equal(30);

      // Not the metrics Service's endpoints: its selector picks the controller's pods only.
      const [service] = objectsOfKind<V1Service>(rendered, "Service");
      const selector = Object.entries(service?.spec?.selector ?? {});
      const labels = spec?.jobTemplate.spec?.template.metadata?.labels ?? {};
      expect(selector.length).to.be.greaterThan(0);
      expect(
        selector.every(([key, value]) => labels[key] === value),
        "Job pods selected",
      ).to.equal(false);
      const workloadLabels = workloadOf(rendered).spec?.template.metadata?.labels ?? {};
      expect(
        selector.every(([key, value]) => workloadLabels[key] === value),
        "controller pods selected",
      ).to.equal(true);
      expect(labels).to.include({
        "sidecar.istio.io/inject": "false",
        "app.kubernetes.io/component": "repair-cronjob",
      });
    });
  }

  it("takes its own schedule, deadlines, resources and extra arguments", async () => {
    const rendered = await renderChart("cluster", {
      "cronJob.enabled": "true",
      "cronJob.schedule": "@hourly",
      "cronJob.timeZone": "Europe/Berlin",
      "cronJob.activeDeadlineSeconds": "120",
      "cronJob.resources.limits.memory": "1Gi",
      "cronJob.extraArgs[0]": "--output=json",
      "cronJob.extraEnv[0].name": "HTTPS_PROXY",
      "cronJob.extraEnv[0].value": "http://proxy:3128",
    });
    const [cronJob] = objectsOfKind<V1CronJob>(rendered, "CronJob");
    expect(cronJob?.spec?.schedule).to.equal("@hourly");
    expect(cronJob?.spec?.timeZone).to.equal("Europe/Berlin");
    expect(cronJob?.spec?.jobTemplate.spec?.activeDeadlineSeconds).to.equal(120);
    const container = cronJob?.spec?.jobTemplate.spec?.template.spec?.containers[0];
    expect(container?.resources).to.deep.equal({ limits: { memory: "1Gi" } });
    expect(container?.args?.at(-1)).to.equal("--output=json");
    expect(container?.env?.at(-1)).to.deep.equal({ name: "HTTPS_PROXY", value: "http://proxy:3128" });
  });

  it("is refused in per-node mode, saying why", async () => {
    const result = await runHelm([
      "template",
      "cni-repair",
      chartDir(),
      ...setValues({ ...IMAGE_VALUES, mode: "per-node", "cronJob.enabled": "true" }),
    ]);
    expect(result.code).to.not.equal(0);
    expect(result.stderr).to.include("cronJob.enabled: not in mode per-node");
  });
});
