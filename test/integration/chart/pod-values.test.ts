// The chart's naming, labelling, priority and securityContext values: rendered by helm, checked by the values schema,
// and (OpenShift-style, no fixed UID) linted, installed on the real API server and admitted under Pod Security
// "restricted". Also what NOTES says about the namespace, the mode and deprecated values.
import type { V1Pod, V1PodSpec, V1PriorityClass } from "@kubernetes/client-node";
import { expect } from "chai";
import { repositoryFile } from "../../harness/binaries.js";
import { chartDir, helm, IMAGE_VALUES, installNotes, renderChart, runHelm, setValues } from "../../harness/helm.js";
import { kubectl } from "../../harness/kubectl.js";
import {
  applyNamespace,
  controllerContainer,
  INSTALL,
  installRendered,
  OVERLAYS,
  objectsOfKind,
  uninstall,
  workloadOf,
} from "../../harness/overlays.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

const OPENSHIFT_VALUES = repositoryFile("charts/cni-repair/ci/openshift-values.yaml");

const podSpecOf = (rendered: Awaited<ReturnType<typeof renderChart>>) =>
  workloadOf(rendered).spec?.template.spec as V1PodSpec;

describe("chart: names, labels, priority class and securityContext values", function () {
  this.timeout(5 * 60_000);

  const refusal = async (values: Record<string, string>) => {
    const result = await runHelm(["template", "cni-repair", chartDir(), ...setValues({ ...IMAGE_VALUES, ...values })]);
    expect(result.code, JSON.stringify(values)).to.not.equal(0);
    return result.stderr;
  };

  it("values.schema.json refuses bad names, labels, classes and securityContext keys, naming the value", async () => {
    expect(await refusal({ nameOverride: "Repair_Bot" })).to.match(/nameOverride/);
    expect(await refusal({ fullnameOverride: "a".repeat(64) })).to.match(/fullnameOverride/);
    expect(await refusal({ "commonLabels.team": "42" })).to.match(/commonLabels/);
    expect(await refusal({ "priorityClass.name": "Critical" })).to.match(/priorityClass/);
    expect(await refusal({ "podSecurityContext.runAsUser": "-1" })).to.match(/runAsUser/);
    expect(await refusal({ "podSecurityContext.runAsUsr": "1000" })).to.match(/runAsUsr/);
    expect(await refusal({ "securityContext.privilegd": "true" })).to.match(/privilegd/);
    expect(await refusal({ "securityContext.capabilities.drop": "ALL" })).to.match(/drop/);
  });

  it("default: non-root 65532 with RuntimeDefault seccomp, a locked-down container, out of every mesh", async () => {
    const rendered = await renderChart("cluster");
    expect(podSpecOf(rendered).securityContext).to.deep.equal({
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(controllerContainer(rendered).securityContext).to.deep.equal({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      privileged: false,
      capabilities: { drop: ["ALL"] },
    });
    expect(workloadOf(rendered).spec?.template.metadata?.labels).to.include({
      "sidecar.istio.io/inject": "false",
      "istio.io/dataplane-mode": "none",
    });
    const overridden = await renderChart("cluster", { "podLabels.istio\\.io/dataplane-mode": "ambient" });
    expect(workloadOf(overridden).spec?.template.metadata?.labels?.["istio.io/dataplane-mode"]).to.equal("ambient");
  });

  it("securityContext values: a key set to null is left out, the whole value null leaves no securityContext", async () => {
    const none = await renderChart("per-node", { podSecurityContext: "null", securityContext: "null" });
    expect(podSpecOf(none).securityContext).to.equal(undefined);
    expect(controllerContainer(none).securityContext).to.equal(undefined);
    const fsGroup = await renderChart("cluster", { "podSecurityContext.fsGroup": "1000" });
    expect(podSpecOf(fsGroup).securityContext).to.include({ fsGroup: 1000, runAsUser: 65532 });
  });

  describe("OpenShift-style (charts/cni-repair/ci/openshift-values.yaml): no fixed UID or GID", () => {
    after(async () => {
      await uninstall(controlPlane());
    });

    it("passes helm lint --strict and renders no runAsUser, runAsGroup or fsGroup in any mode", async () => {
      for (const mode of OVERLAYS) {
        const lint = await runHelm([
          "lint",
          "--strict",
          chartDir(),
          "--values",
          OPENSHIFT_VALUES,
          ...setValues({ ...IMAGE_VALUES, mode }),
        ]);
        expect(lint.code, `${mode}:\n${lint.stdout}${lint.stderr}`).to.equal(0);
        const rendered = await renderChart(mode, {}, { valueFiles: [OPENSHIFT_VALUES] });
        expect(rendered.yaml, mode).to.not.match(/runAsUser|runAsGroup|fsGroup|\b65532\b/);
        expect(podSpecOf(rendered).securityContext, mode).to.deep.equal({
          runAsNonRoot: true,
          seccompProfile: { type: "RuntimeDefault" },
        });
      }
    });

    it("installs on the API server and its pod is admitted under the restricted standard", async () => {
      const plane = controlPlane();
      const { rendered } = await installRendered(
        plane,
        await renderChart("cluster", {}, { valueFiles: [OPENSHIFT_VALUES] }),
      );
      const template = workloadOf(rendered).spec?.template;
      const pod: V1Pod = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { ...template?.metadata, name: "cni-repair-openshift-0", namespace: INSTALL.namespace },
        ...(template?.spec && { spec: { ...template.spec, nodeName: "node-a" } }),
      };
      const created = await kubectl(["create", "--dry-run=server", "-o", "json", "-f", "-"], {
        plane,
        input: JSON.stringify(pod),
      });
      const admitted = JSON.parse(created) as V1Pod;
      expect(admitted.spec?.securityContext?.runAsUser).to.equal(undefined);
      expect(admitted.spec?.securityContext?.runAsNonRoot).to.equal(true);
    });
  });

  it("nameOverride, fullnameOverride and commonLabels name and label every object", async () => {
    const named = await renderChart("cluster", {
      fullnameOverride: "repair",
      "commonLabels.team": "platform",
      "commonLabels.cost-center": "mesh",
    });
    const names = named.objects.map((object) => object.metadata?.name);
    for (const object of named.objects) {
      expect(object.metadata?.labels, `${object.kind}/${object.metadata?.name}`).to.include({
        team: "platform",
        "cost-center": "mesh",
      });
      expect(object.metadata?.name, object.kind).to.match(/^repair(-|$)/);
    }
    expect(names).to.include.members(["repair", "repair-critical", "repair-meshed-pods", "repair-metrics"]);
    expect(workloadOf(named).spec?.template.metadata?.labels).to.include({ team: "platform" });
    expect(controllerContainer(named).args).to.include("--admission-policies=repair-meshed-pods");
    expect(controllerContainer(named).args).to.include("--leader-election-id=repair");

    const renamed = await renderChart("cluster", { nameOverride: "mesh-repair" }, { release: "prod" });
    expect(workloadOf(renamed).metadata?.name).to.equal("prod-mesh-repair");
    expect(workloadOf(renamed).spec?.selector?.matchLabels).to.include({ "app.kubernetes.io/name": "mesh-repair" });
  });

  it("a PriorityClass per release: two releases never share one; a name of your own, or none", async () => {
    const classOf = (rendered: Awaited<ReturnType<typeof renderChart>>) => ({
      created: objectsOfKind<V1PriorityClass>(rendered, "PriorityClass").map((object) => object.metadata?.name),
      used: podSpecOf(rendered).priorityClassName,
    });
    expect(classOf(await renderChart("cluster"))).to.deep.equal({
      created: ["cni-repair-critical"],
      used: "cni-repair-critical",
    });
    expect(classOf(await renderChart("cluster", {}, { release: "edge" }))).to.deep.equal({
      created: ["edge-cni-repair-critical"],
      used: "edge-cni-repair-critical",
    });
    expect(classOf(await renderChart("cluster", { "priorityClass.name": "repair-high" }))).to.deep.equal({
      created: ["repair-high"],
      used: "repair-high",
    });
    expect(classOf(await renderChart("cluster", { "priorityClass.create": "false" }))).to.deep.equal({
      created: [],
      used: undefined,
    });
    // The old value still works (NOTES warns, below).
    const old = { priorityClassName: "system-cluster-critical", "priorityClass.create": "false" };
    expect(classOf(await renderChart("cluster", old))).to.deep.equal({ created: [], used: "system-cluster-critical" });
  });

  it("two releases install side by side on the API server: each its own PriorityClass, nothing shared", async () => {
    const plane = controlPlane();
    await uninstall(plane);
    await applyNamespace(plane);
    const releases = ["cni-repair", "edge"];
    try {
      for (const release of releases) {
        await helm(
          [
            "install",
            release,
            chartDir(),
            "--namespace",
            INSTALL.namespace,
            ...setValues({ ...IMAGE_VALUES, mode: "dry-run" }),
          ],
          { plane },
        );
      }
      const classes = await kubectl(
        ["get", "priorityclass", "-l", "app.kubernetes.io/part-of=cni-repair", "-o", "name"],
        {
          plane,
        },
      );
      expect(classes.trim().split("\n").sort()).to.deep.equal([
        "priorityclass.scheduling.k8s.io/cni-repair-critical",
        "priorityclass.scheduling.k8s.io/edge-cni-repair-critical",
      ]);
    } finally {
      for (const release of releases) {
        await helm(["uninstall", release, "--namespace", INSTALL.namespace, "--ignore-not-found", "--wait"], { plane });
      }
    }
  });

  it("NOTES: the mode in both vocabularies, Pod Security only for a namespace it created, deprecated values", async () => {
    const kubeSystem = await installNotes("kube-system");
    expect(kubeSystem).to.include("the controller's --mode=delete");
    expect(kubeSystem).to.include("cluster, per-node -> delete; label-only -> label; dry-run -> report");
    expect(kubeSystem).to.not.match(/kubectl label namespace|pod-security\.kubernetes\.io/);
    expect(kubeSystem).to.not.include("DEPRECATED");
    expect(await installNotes("cni-repair", { mode: "dry-run" })).to.include("the controller's --mode=report");
    expect(await installNotes("cni-repair", { "namespace.create": "true" })).to.include(
      'This chart created the namespace cni-repair, enforcing the Pod Security "restricted" standard',
    );
    expect(await installNotes("cni-repair", { priorityClassName: "system-cluster-critical" })).to.include(
      "DEPRECATED: the value priorityClassName (system-cluster-critical) is now priorityClass.name",
    );
  });
});
