// The Helm chart as helm (built from the Go module proxy) lints and renders it: strict lint, the values schema
// refusing bad values, one rendering per mode, and every value reaching the controller as the flag it names
// (checked with the controller's own flag parser).
import type { V1Deployment, V1PodSpec, V1PriorityClass } from "@kubernetes/client-node";
import { expect } from "chai";
import { parseConfig } from "../../../src/config/config.js";
import { envVarName, flagNames } from "../../../src/config/flags.js";
import { describeFieldSelector } from "../../../src/config/selectors.js";
import { chartDir, helm, IMAGE_VALUES, renderChart, runHelm, setValues } from "../../harness/helm.js";
import {
  controllerContainer,
  OVERLAYS,
  objectsOfKind,
  podCommand,
  renderedPermissions,
  workloadOf,
} from "../../harness/overlays.js";

const PLACEMENT = { namespace: "cni-repair", nodeName: "node-a", podName: "cni-repair-0" };

describe("chart: helm lint, schema and template", function () {
  // The first call may build helm (cached afterwards).
  this.timeout(20 * 60_000);

  it("passes helm lint --strict in every mode", async () => {
    for (const mode of OVERLAYS) {
      const result = await runHelm(["lint", "--strict", chartDir(), ...setValues({ ...IMAGE_VALUES, mode })]);
      expect(result.code, `${mode}:\n${result.stdout}${result.stderr}`).to.equal(0);
      expect(result.stdout).to.match(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    }
  });

  const refusal = async (values: Record<string, string>) => {
    const result = await runHelm(["template", "cni-repair", chartDir(), ...setValues({ ...IMAGE_VALUES, ...values })]);
    expect(result.code, JSON.stringify(values)).to.not.equal(0);
    return result.stderr;
  };

  it("values.schema.json refuses an unknown mode, naming it and the modes there are", async () => {
    const message = await refusal({ mode: "delete-everything" });
    expect(message).to.match(/mode/);
    expect(message).to.match(/cluster.*per-node.*label-only.*dry-run/);
  });

  it("values.schema.json refuses wrong types, unknown presets, misspelled keys and values out of range", async () => {
    expect(await refusal({ replicaCount: "two" })).to.match(/replicaCount/);
    expect(await refusal({ "limits.deleteBarePods": "sometimes" })).to.match(/deleteBarePods/);
    expect(await refusal({ presets: "{istio,cilium}" })).to.match(/presets/);
    expect(await refusal({ "image.digest": "latest" })).to.match(/digest/);
    expect(await refusal({ modee: "cluster" })).to.match(/modee/);
    expect(await refusal({ "limits.maxBrokenFraction": "1.5" })).to.match(/maxBrokenFraction/);
  });

  it("refuses replicas without leader election: they would all act", async () => {
    expect(await refusal({ "leaderElection.enabled": "false" })).to.match(/replicaCount 2 needs leaderElection/);
    const single = await renderChart("cluster", { "leaderElection.enabled": "false", replicaCount: "1" });
    const { args } = podCommand(controllerContainer(single), PLACEMENT);
    expect(args).to.include("--leader-elect=false");
    // No Lease Role, and none in Istio's namespace (its settings are read through a ClusterRole): no Role at all.
    expect(single.objects.filter((object) => object.kind === "Role")).to.deep.equal([]);
  });

  it("grants reading Istio's repair settings only with the istio preset, by name: a ClusterRole, or a Role where pinned", async () => {
    const istioRbac = (rendered: Awaited<ReturnType<typeof renderChart>>) =>
      rendered.objects
        .filter((object) => object.metadata?.name === "cni-repair-istio-repair")
        .map((object) => `${object.kind}${object.metadata?.namespace ? ` in ${object.metadata.namespace}` : ""}`);
    const ISTIO_READS = ["get", "list", "watch"].flatMap((verb) => [
      `${verb} core/configmaps istio-cni-config`,
      `${verb} apps/daemonsets istio-cni-node`,
    ]);
    const byDefault = await renderChart("cluster");
    expect(istioRbac(byDefault)).to.deep.equal(["ClusterRole", "ClusterRoleBinding"]);
    // In every namespace (kube-system on GKE, any other), and by name only: no other ConfigMap or DaemonSet.
    for (const namespace of ["kube-system", "istio-system", "cni-repair"]) {
      const granted = renderedPermissions(byDefault, namespace);
      expect(granted).to.include.members(ISTIO_READS);
      expect(granted.filter((p) => p.includes("configmaps") || p.includes("daemonsets")).sort()).to.deep.equal(
        [...ISTIO_READS].sort(),
      );
    }
    const args = (rendered: Awaited<ReturnType<typeof renderChart>>) => {
      const { args: argv, env } = podCommand(controllerContainer(rendered), PLACEMENT);
      return parseConfig(argv, env).config;
    };
    expect(args(byDefault).istioRepair).to.deep.equal({ namespace: undefined });
    for (const pinned of [{ "cniAgent.namespaces.istio": "kube-system" }, { "cniAgent.namespace": "kube-system" }]) {
      const rendered = await renderChart("cluster", pinned);
      expect(istioRbac(rendered)).to.deep.equal(["Role in kube-system", "RoleBinding in kube-system"]);
      expect(renderedPermissions(rendered, "kube-system")).to.include.members(ISTIO_READS);
      expect(renderedPermissions(rendered, "istio-system").filter((p) => p.includes("configmaps"))).to.deep.equal([]);
      expect(args(rendered).istioRepair).to.deep.equal({ namespace: "kube-system" });
    }
    // Linkerd's agent pinned apart from Istio's: Istio's is still found anywhere.
    const apart = await renderChart("cluster", {
      presets: "{istio,linkerd}",
      "cniAgent.namespaces.linkerd": "linkerd-cni",
    });
    expect(istioRbac(apart)).to.deep.equal(["ClusterRole", "ClusterRoleBinding"]);
    expect(args(apart).cniAgentGate?.namespaces).to.deep.equal({ all: undefined, byRule: { linkerd: "linkerd-cni" } });
    expect(istioRbac(await renderChart("cluster", { istioRepair: "ignore" }))).to.deep.equal([]);
    expect(istioRbac(await renderChart("cluster", { presets: "{linkerd}" }))).to.deep.equal([]);
    expect(args(await renderChart("cluster", { istioRepair: "ignore" })).istioRepair).to.equal(undefined);
  });

  it("renders each mode as its workload, controller mode and permissions", async () => {
    const expected = {
      cluster: { kind: "Deployment", mode: "delete", delete: true, label: true, lease: true },
      "per-node": { kind: "DaemonSet", mode: "delete", delete: true, label: true, lease: false },
      "label-only": { kind: "Deployment", mode: "label", delete: false, label: true, lease: true },
      "dry-run": { kind: "Deployment", mode: "report", delete: true, label: false, lease: true },
    } as const;
    for (const mode of OVERLAYS) {
      const rendered = await renderChart(mode);
      const want = expected[mode];
      expect(workloadOf(rendered).kind, mode).to.equal(want.kind);
      expect(podCommand(controllerContainer(rendered), PLACEMENT).env.CNI_REPAIR_MODE, mode).to.equal(want.mode);
      const permissions = renderedPermissions(rendered);
      expect(permissions.includes("delete core/pods"), `${mode} delete`).to.equal(want.delete);
      expect(permissions.includes("patch core/pods/status"), `${mode} label`).to.equal(want.label);
      expect(permissions.includes("update coordination.k8s.io/leases cni-repair"), `${mode} lease`).to.equal(
        want.lease,
      );
      expect(
        permissions.some((permission) => permission.includes("namespaces")),
        mode,
      ).to.equal(false);
    }
  });

  it("image.repository is required (no image is published yet): without it the chart fails naming the value", async () => {
    for (const values of [{}, { "image.repository": "" }]) {
      const result = await runHelm(["template", "cni-repair", chartDir(), ...setValues(values)]);
      expect(result.code, JSON.stringify(values)).to.not.equal(0);
      expect(result.stderr).to.include("image.repository is required");
      expect(result.stderr).to.include("--set image.repository=");
    }
  });

  it("defaults: Linux nodes, the chart's own PriorityClass, the image of the chart's appVersion", async () => {
    const chart = await helm(["show", "chart", chartDir()]);
    const appVersion = /^appVersion: "?([^"\n]+)"?$/m.exec(chart)?.[1];
    for (const mode of OVERLAYS) {
      const rendered = await renderChart(mode);
      const pod = workloadOf(rendered).spec?.template.spec as V1PodSpec;
      expect(pod.nodeSelector).to.deep.equal({ "kubernetes.io/os": "linux" });
      expect(pod.priorityClassName).to.equal("cni-repair-critical");
      const [priorityClass] = objectsOfKind<V1PriorityClass>(rendered, "PriorityClass");
      expect(priorityClass?.metadata?.name).to.equal("cni-repair-critical");
      expect(priorityClass?.value).to.equal(1_000_000_000);
      expect(controllerContainer(rendered).image).to.equal(`${IMAGE_VALUES["image.repository"]}:${appVersion}`);
    }
    const digest = `sha256:${"ab".repeat(32)}`;
    const pinned = await renderChart("cluster", { "image.digest": digest, "image.tag": "1.2.3" });
    expect(controllerContainer(pinned).image).to.equal(`${IMAGE_VALUES["image.repository"]}:1.2.3@${digest}`);
  });

  it("every value reaches the controller as its flag, and the controller accepts them all", async () => {
    const values: Record<string, string> = {
      presets: "{istio,linkerd,istio-ambient}",
      "customRule.initContainer": "acme-check",
      "customRule.exitCodes": "{42,43}",
      "customRule.terminationMessage": "no redirect",
      "customRule.requireAnnotation": "acme.io/mesh",
      "customRule.requireLabel": "acme.io/injected=true",
      "customRule.name": "acme",
      "brokenPodLabel.key": "example.com/broken",
      "brokenPodLabel.value": "yes",
      "scope.namespaces": "{shop,payments}",
      "scope.excludeNamespaces": "{kube-system}",
      "scope.labelSelector": "tier in (web\\,api)",
      "scope.fieldSelector": "status.phase!=Succeeded",
      "limits.maxDeletionsPerMinute": "30",
      "limits.maxOutageDeletionsPerMinute": "300",
      "limits.deletionBurst": "3",
      "limits.maxInflightDeletionsPerNode": "4",
      "limits.maxInflightDeletionsPerNamespace": "5",
      "limits.deleteBarePods": "true",
      "limits.maxBrokenFraction": "0.25",
      "limits.stormMinBroken": "7",
      "limits.stormWindow": "5m",
      "limits.loopBackoff": "2m",
      "limits.loopBackoffMax": "1h",
      "limits.workers": "8",
      "limits.maxRetries": "9",
      "cniAgent.gate": "on",
      "cniAgent.minReady": "30s",
      "cniAgent.selector": "app=cni",
      "cniAgent.namespace": "kube-system",
      "startupTaint.mode": "continuous",
      "startupTaint.keys": "{example.com/cni-down,cni.istio.io/not-ready}",
      "startupTaint.notReadyAfter": "3m",
      "startupTaint.maxShare": "0.3",
      "ambient.action": "delete",
      "ambient.enrollGrace": "90s",
      "ambient.excludedNamespaces": "{kube-system,istio-system}",
      "ambient.ztunnelSelector": "app=zt",
      "ambient.ztunnelNamespace": "mesh",
      "leaderElection.id": "repair-lock",
      "leaderElection.leaseDuration": "20s",
      "leaderElection.renewDeadline": "15s",
      "leaderElection.retryPeriod": "3s",
      logLevel: "debug",
      shutdownTimeoutSeconds: "25",
      extraArgs: "{--list-page-size=250}",
      "extraEnv[0].name": "TZ",
      "extraEnv[0].value": "UTC",
    };
    const rendered = await renderChart("cluster", values);
    const { args, env } = podCommand(controllerContainer(rendered), PLACEMENT);
    expect(env.TZ).to.equal("UTC");
    const { command, config } = parseConfig(args, env);
    expect(command).to.equal("run");
    expect(config.rules.map((rule) => rule.name)).to.deep.equal(["istio", "linkerd", "istio-ambient", "acme"]);
    expect(config.label).to.deep.equal({ key: "example.com/broken", value: "yes" });
    expect(config.namespaces).to.deep.equal(["shop", "payments"]);
    expect(config.excludeNamespaces).to.deep.equal(["kube-system"]);
    expect(config.scope.labelSelector).to.equal("tier in (web,api)");
    // The controller adds the excluded namespaces to the field selector.
    expect(describeFieldSelector(config.scope)).to.equal("status.phase!=Succeeded,metadata.namespace!=kube-system");
    expect(config.limits).to.deep.equal({
      deletionsPerMinute: 30,
      outageDeletionsPerMinute: 300,
      deletionBurst: 3,
      inflightPerNode: 4,
      inflightPerNamespace: 5,
    });
    expect(config.deleteBarePods).to.equal(true);
    expect(config.storm).to.deep.equal({ maxBrokenFraction: 0.25, minBroken: 7, windowMs: 300_000 });
    expect(config.loopBackoff).to.deep.equal({ baseMs: 120_000, maxMs: 3_600_000 });
    expect([config.workers, config.maxRetries, config.listPageSize]).to.deep.equal([8, 9, 250]);
    expect(config.cniAgentGate).to.deep.equal({
      minReadyMs: 30_000,
      selector: "app=cni",
      namespaces: { all: "kube-system", byRule: {} },
    });
    expect(config.leaderElection).to.deep.include({
      id: "repair-lock",
      namespace: "cni-repair",
      leaseDurationMs: 20_000,
      renewDeadlineMs: 15_000,
      retryPeriodMs: 3_000,
    });
    expect(config.startupTaint).to.deep.equal({
      mode: "continuous",
      keys: ["example.com/cni-down", "cni.istio.io/not-ready"],
      notReadyAfterMs: 180_000,
      maxShare: 0.3,
    });
    expect(config.logLevel).to.equal("debug");
    expect(config.shutdownTimeoutMs).to.equal(25_000);
    const pod = workloadOf(rendered).spec?.template.spec as V1PodSpec;
    expect(pod.terminationGracePeriodSeconds).to.equal(35);
    expect(args.join(" ")).to.include("--ambient-action=delete");
    expect(args.join(" ")).to.include("--ztunnel-namespace=mesh");
    // The Lease the controller is told to use is the one its Role names; istio-ambient brings namespace access.
    expect(renderedPermissions(rendered)).to.include.members([
      "update coordination.k8s.io/leases repair-lock",
      "list core/namespaces",
      "watch core/namespaces",
      "patch core/nodes",
    ]);
    // The admission policy names exactly the keys the controller manages, and this service account.
    const policy = rendered.objects.find(
      (o) => o.kind === "ValidatingAdmissionPolicy" && o.metadata?.name === "cni-repair-startup-taints",
    ) as
      | { spec: { variables: { name: string; expression: string }[]; matchConditions: { expression: string }[] } }
      | undefined;
    expect(JSON.parse(policy?.spec.variables.find((v) => v.name === "keys")?.expression ?? "null")).to.deep.equal([
      "example.com/cni-down",
      "cni.istio.io/not-ready",
    ]);
    expect(policy?.spec.matchConditions[0]?.expression).to.include("system:serviceaccount:cni-repair:cni-repair");
  });

  it("every controller flag has a value, is set by the chart itself, or is deliberately left to extraArgs", async () => {
    const rendered = await renderChart("cluster", {
      presets: "{istio-ambient}",
      "customRule.initContainer": "x",
      "customRule.exitCodes": "{1}",
      "customRule.terminationMessage": "m",
      "customRule.requireAnnotation": "a",
      "customRule.requireLabel": "l",
      "customRule.name": "n",
      "brokenPodLabel.key": "k",
      "brokenPodLabel.value": "v",
      "scope.namespaces": "{a}",
      "scope.excludeNamespaces": "{b}",
      "scope.labelSelector": "c",
      "scope.fieldSelector": "d=e",
      ...Object.fromEntries(
        [
          "maxDeletionsPerMinute",
          "maxOutageDeletionsPerMinute",
          "deletionBurst",
          "maxInflightDeletionsPerNode",
          "maxInflightDeletionsPerNamespace",
          "stormMinBroken",
          "workers",
          "maxRetries",
        ].map((key) => [`limits.${key}`, "1"]),
      ),
      "limits.deleteBarePods": "true",
      "limits.maxBrokenFraction": "1",
      ...Object.fromEntries(["stormWindow", "loopBackoff", "loopBackoffMax"].map((key) => [`limits.${key}`, "1m"])),
      "cniAgent.gate": "on",
      "cniAgent.minReady": "1s",
      "cniAgent.selector": "s",
      "cniAgent.namespace": "n",
      istioRepair: "auto",
      "startupTaint.mode": "continuous",
      "startupTaint.keys": "{k}",
      "startupTaint.notReadyAfter": "1m",
      "startupTaint.maxShare": "0.5",
      "ambient.action": "report",
      "ambient.enrollGrace": "1s",
      "ambient.excludedNamespaces": "{a}",
      "ambient.podSelector": "a=b",
      "ambient.namespaceSelector": "a=b",
      "ambient.optOut": "a=b",
      "ambient.ztunnelSelector": "s",
      "ambient.ztunnelNamespace": "n",
      "leaderElection.leaseDuration": "1s",
      "leaderElection.renewDeadline": "1s",
      "leaderElection.retryPeriod": "1s",
      logLevel: "info",
      v8Flags: "{--no-opt}",
      v8FlagsAfterSync: "{--maglev}",
    });
    const { args, env } = podCommand(controllerContainer(rendered), PLACEMENT);
    const fromArgs = args.map((arg) => /^--([a-z-]+)=/.exec(arg)?.[1] ?? arg);
    const fromEnv = flagNames.filter((name) => {
      const variable = envVarName(name);
      return variable !== undefined && env[variable] !== undefined;
    });
    // Per-node sets --node-name through the downward API.
    const chartSets = new Set([...fromArgs, ...fromEnv, "node-name"]);
    // Out-of-cluster, scan-only or tuning flags: extraArgs passes them.
    const leftToExtraArgs = [
      "kubeconfig",
      "context",
      "output",
      "repair",
      "help",
      "version",
      "http-address",
      "retry-base-delay",
      "retry-max-delay",
      "resync-period",
      "list-page-size",
      "watch-list",
      "watch-timeout",
      "watch-stall-timeout",
    ];
    const unmapped = flagNames.filter((name) => !chartSets.has(name) && !leftToExtraArgs.includes(name));
    expect(unmapped, "flags with no chart value: add one (values.yaml, schema, _args.tpl)").to.deep.equal([]);
  });

  it("leaves the controller's defaults alone where values are empty, with an explicit preset list", async () => {
    const rendered = await renderChart("cluster");
    const { args, env } = podCommand(controllerContainer(rendered), PLACEMENT);
    // run first: a bare cni-repair only prints help.
    expect(args).to.deep.equal([
      "run",
      "--preset=istio",
      "--http-port=8080",
      "--shutdown-timeout=20s",
      "--log-format=json",
      "--leader-elect=true",
      "--leader-election-id=cni-repair",
      "--admission-policies=cni-repair-meshed-pods",
    ]);
    // A custom rule alone: --preset= turns the built-in rules off. Without a marker, the meshed-pods policy has
    // nothing to allow its pods by.
    const custom = await renderChart("cluster", {
      presets: "null",
      "customRule.initContainer": "acme-check",
      "customRule.exitCodes": "{42}",
      "cniAgent.gate": "off",
      "admissionPolicies.meshedPods": "false",
    });
    const customCommand = podCommand(controllerContainer(custom), PLACEMENT);
    expect(customCommand.args).to.include("--preset=");
    expect(parseConfig(customCommand.args, customCommand.env).config.rules.map((rule) => rule.name)).to.deep.equal([
      "custom",
    ]);
    expect(parseConfig(args, env).config.mode).to.equal("delete");
  });

  it("places the pod with the values given, and keeps each mode's defaults otherwise", async () => {
    const placed = await renderChart("cluster", {
      "nodeSelector.pool": "system",
      "tolerations[0].key": "dedicated",
      "tolerations[0].operator": "Exists",
      "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key":
        "zone",
      "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator":
        "Exists",
      "topologySpreadConstraints[0].maxSkew": "2",
      "topologySpreadConstraints[0].topologyKey": "topology.kubernetes.io/zone",
      "topologySpreadConstraints[0].whenUnsatisfiable": "DoNotSchedule",
      replicaCount: "3",
      "priorityClass.name": "system-cluster-critical",
      "priorityClass.create": "false",
      "podDisruptionBudget.enabled": "false",
      "networkPolicy.enabled": "false",
      "resources.requests.memory": "1Gi",
      "resources.limits.memory": "1Gi",
      heapMiB: "700",
      nodeOptions: "--max-semi-space-size=16",
    });
    const deployment = workloadOf(placed) as V1Deployment;
    const pod = deployment.spec?.template.spec as V1PodSpec;
    expect(deployment.spec?.replicas).to.equal(3);
    expect(pod.nodeSelector).to.deep.equal({ "kubernetes.io/os": "linux", pool: "system" });
    expect(pod.tolerations).to.deep.equal([{ key: "dedicated", operator: "Exists" }]);
    expect(pod.affinity?.nodeAffinity).to.not.equal(undefined);
    expect(pod.topologySpreadConstraints).to.deep.equal([
      { maxSkew: 2, topologyKey: "topology.kubernetes.io/zone", whenUnsatisfiable: "DoNotSchedule" },
    ]);
    expect(pod.priorityClassName).to.equal("system-cluster-critical");
    expect(placed.objects.map((object) => object.kind)).to.not.include.members([
      "PriorityClass",
      "PodDisruptionBudget",
      "NetworkPolicy",
    ]);
    expect(controllerContainer(placed).resources).to.deep.equal({
      requests: { memory: "1Gi" },
      limits: { memory: "1Gi" },
    });
    expect(podCommand(controllerContainer(placed), PLACEMENT).env.NODE_OPTIONS).to.equal(
      "--max-old-space-size=700 --max-semi-space-size=16",
    );

    const perNode = workloadOf(await renderChart("per-node")).spec?.template.spec as V1PodSpec;
    expect(perNode.tolerations).to.deep.equal([{ operator: "Exists" }]);
    expect(perNode.topologySpreadConstraints).to.equal(undefined);
    const cluster = workloadOf(await renderChart("cluster")).spec?.template.spec as V1PodSpec;
    expect(cluster.tolerations).to.equal(undefined);
    expect(cluster.topologySpreadConstraints?.[0]?.topologyKey).to.equal("kubernetes.io/hostname");
  });

  it("per-node: the image's node with V8's memory reducer off, the optimising compilers off by --v8-flags and Maglev on after sync; nodeFlags, v8Flags and v8FlagsAfterSync replace theirs", async () => {
    const flagsOf = async (values: Record<string, string> = {}) => {
      const container = controllerContainer(await renderChart("per-node", values));
      const { env, nodeFlags } = podCommand(container, PLACEMENT);
      return {
        command: container.command,
        nodeFlags,
        v8Flags: env.CNI_REPAIR_V8_FLAGS,
        afterSync: env.CNI_REPAIR_V8_FLAGS_AFTER_SYNC,
      };
    };
    expect(await flagsOf()).to.deep.equal({
      command: ["/usr/local/bin/node", "--no-memory-reducer", "/app/dist/src/cli/main.js"],
      nodeFlags: ["--no-memory-reducer"],
      v8Flags: "--no-opt,--no-maglev,--invocation-count-for-turbofan=400",
      afterSync: "--maglev",
    });
    expect((await flagsOf({ "sizing.daemonSet.v8FlagsAfterSync": "null" })).afterSync).to.equal(undefined);
    expect((await flagsOf({ v8FlagsAfterSync: "{--maglev,--no-sparkplug}" })).afterSync).to.equal(
      "--maglev,--no-sparkplug",
    );
    expect((await flagsOf({ "sizing.daemonSet.nodeFlags": "null" })).command, "none: the entry point").to.equal(
      undefined,
    );
    expect((await flagsOf({ nodeFlags: "{--stack-size=2000}" })).nodeFlags).to.deep.equal(["--stack-size=2000"]);
    expect((await flagsOf({ v8Flags: "{--no-opt}" })).v8Flags).to.equal("--no-opt");
    expect((await flagsOf({ v8Flags: "null" })).v8Flags).to.equal(
      "--no-opt,--no-maglev,--invocation-count-for-turbofan=400",
    );
    expect((await flagsOf({ "sizing.daemonSet.v8Flags": "null" })).v8Flags).to.equal(undefined);
    const cluster = controllerContainer(await renderChart("cluster"));
    expect(cluster.command).to.equal(undefined);
    expect(podCommand(cluster, PLACEMENT).env.CNI_REPAIR_V8_FLAGS).to.equal(undefined);
    expect(podCommand(cluster, PLACEMENT).env.CNI_REPAIR_V8_FLAGS_AFTER_SYNC).to.equal(undefined);
    expect(await refusal({ nodeFlags: "{rm -rf}" })).to.match(/nodeFlags/);
    expect(await refusal({ v8Flags: "{--no-opt --no-maglev}" })).to.match(/v8Flags/);
    expect(await refusal({ v8FlagsAfterSync: "{--maglev --no-opt}" })).to.match(/v8FlagsAfterSync/);
  });

  it("monitoring objects carry their extra labels; the dashboard is the shipped JSON", async () => {
    const rendered = await renderChart("cluster", {
      "serviceMonitor.enabled": "true",
      "serviceMonitor.labels.release": "prom",
      "prometheusRule.enabled": "true",
      "prometheusRule.labels.role": "alerts",
      "dashboard.enabled": "true",
      "dashboard.labels.team": "platform",
    });
    const labelsOf = (kind: string) => rendered.objects.find((object) => object.kind === kind)?.metadata?.labels;
    expect(labelsOf("ServiceMonitor")).to.include({ release: "prom", "app.kubernetes.io/name": "cni-repair" });
    expect(labelsOf("PrometheusRule")).to.include({ role: "alerts" });
    expect(labelsOf("ConfigMap")).to.include({ team: "platform", grafana_dashboard: "1" });
  });

  it("prometheusRule.runbookBaseUrl moves every alert's runbook_url to that page, keeping its anchor", async () => {
    const base = "https://wiki.example.com/ops/cni-repair-runbooks";
    const rendered = await renderChart("dry-run", {
      "prometheusRule.enabled": "true",
      "prometheusRule.runbookBaseUrl": base,
    });
    type Rules = { spec: { groups: { rules: { alert: string; annotations: Record<string, string> }[] }[] } };
    const rule = rendered.objects.find((object) => object.kind === "PrometheusRule") as unknown as Rules;
    const urls = rule.spec.groups.flatMap((group) => group.rules.map((r) => [r.alert, r.annotations.runbook_url]));
    expect(urls.length).to.be.greaterThan(5);
    for (const [alert, url] of urls) expect(url).to.equal(`${base}#${alert?.toLowerCase()}`);
    expect(await refusal({ "prometheusRule.runbookBaseUrl": "docs/runbooks.md#x" })).to.match(/runbookBaseUrl/);
  });
});
