// The overlays as `kubectl kustomize` renders them: what each installs, the hardened pod, one image reference.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type {
  V1DaemonSet,
  V1Deployment,
  V1NetworkPolicy,
  V1PodDisruptionBudget,
  V1PodSpec,
  V1Service,
} from "@kubernetes/client-node";
import { expect } from "chai";
import { repositoryFile } from "../../harness/binaries.js";
import {
  controllerContainer,
  manifestsDir,
  OVERLAYS,
  type Overlay,
  objectsOfKind,
  podCommand,
  type Rendered,
  renderOverlay,
  workloadOf,
} from "../../harness/overlays.js";

const ISTIO_REPAIR = ["ClusterRole/cni-repair-istio-repair", "ClusterRoleBinding/cni-repair-istio-repair"];
const SHARED = [
  "ClusterRole/cni-repair-watch-pods",
  "ClusterRoleBinding/cni-repair-watch-pods",
  "NetworkPolicy/cni-repair",
  "PriorityClass/cni-repair-critical",
  "Service/cni-repair-metrics",
  "ServiceAccount/cni-repair",
  // Every mode: deletes and status patches of meshed pods only, and the startup check's read of its policies.
  "ValidatingAdmissionPolicy/cni-repair-meshed-pods",
  "ValidatingAdmissionPolicyBinding/cni-repair-meshed-pods",
  "ClusterRole/cni-repair-read-admission-policies",
  "ClusterRoleBinding/cni-repair-read-admission-policies",
  // The istio preset reads Istio's repair settings, by name, wherever Istio's CNI agent runs.
  ...ISTIO_REPAIR,
];
const DEPLOYMENT = ["Deployment/cni-repair", "PodDisruptionBudget/cni-repair"];
const ELECTION = ["Role/cni-repair-leader-election", "RoleBinding/cni-repair-leader-election"];
const DELETE_PODS = ["ClusterRole/cni-repair-delete-pods", "ClusterRoleBinding/cni-repair-delete-pods"];
const LABEL_PODS = ["ClusterRole/cni-repair-label-pods", "ClusterRoleBinding/cni-repair-label-pods"];

const OBJECTS: Record<Overlay, string[]> = {
  cluster: [...SHARED, ...DEPLOYMENT, ...ELECTION, ...DELETE_PODS, ...LABEL_PODS],
  "per-node": [
    ...SHARED,
    "DaemonSet/cni-repair",
    ...DELETE_PODS,
    ...LABEL_PODS,
    "ValidatingAdmissionPolicy/cni-repair-own-node",
    "ValidatingAdmissionPolicyBinding/cni-repair-own-node",
  ],
  "label-only": [...SHARED, ...DEPLOYMENT, ...ELECTION, ...LABEL_PODS],
  "dry-run": [...SHARED, ...DEPLOYMENT, ...ELECTION, ...DELETE_PODS],
};
const MODE: Record<Overlay, string> = {
  cluster: "delete",
  "per-node": "delete",
  "label-only": "label",
  "dry-run": "report",
};

const PLACEMENT = { namespace: "cni-repair", nodeName: "node-a", podName: "cni-repair-0" };

describe("manifests: rendered overlays", () => {
  const rendered = new Map<Overlay, Rendered>();
  const render = (overlay: Overlay): Rendered => {
    const found = rendered.get(overlay);
    if (!found) throw new Error(`${overlay} was not rendered`);
    return found;
  };
  const podSpec = (overlay: Overlay): V1PodSpec => workloadOf(render(overlay)).spec?.template.spec as V1PodSpec;

  before(async () => {
    for (const overlay of OVERLAYS) rendered.set(overlay, await renderOverlay(overlay));
  });

  for (const overlay of OVERLAYS) {
    it(`${overlay}: renders exactly the objects of its mode, namespaced in cni-repair (none in istio-system, which may not exist)`, () => {
      const { objects } = render(overlay);
      expect(objects.map((object) => `${object.kind}/${object.metadata?.name}`).sort()).to.deep.equal(
        [...OBJECTS[overlay]].sort(),
      );
      const clusterScoped = new Set([
        "PriorityClass",
        "ClusterRole",
        "ClusterRoleBinding",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
      ]);
      for (const object of objects) {
        const name = `${object.kind}/${object.metadata?.name}`;
        expect(object.metadata?.namespace, name).to.equal(
          clusterScoped.has(object.kind ?? "") ? undefined : "cni-repair",
        );
        expect(object.metadata?.labels).to.include({ "app.kubernetes.io/part-of": "cni-repair" });
      }
    });

    it(`${overlay}: runs in ${MODE[overlay]} mode, electing a leader only as a Deployment`, () => {
      const { args, env } = podCommand(controllerContainer(render(overlay)), PLACEMENT);
      expect(env.CNI_REPAIR_MODE).to.equal(MODE[overlay]);
      expect(args.filter((arg) => arg.startsWith("--mode"))).to.deep.equal([]);
      const workload = workloadOf(render(overlay));
      if (overlay === "per-node") {
        expect(workload.kind).to.equal("DaemonSet");
        expect(args).to.include("--leader-elect=false");
        expect(env.CNI_REPAIR_NODE_NAME).to.equal("node-a");
        expect(podSpec(overlay).tolerations).to.deep.equal([{ operator: "Exists" }]);
      } else {
        expect(workload.kind).to.equal("Deployment");
        expect((workload as V1Deployment).spec?.replicas).to.equal(2);
        expect(args).to.include.members(["--leader-elect=true", "--leader-election-id=cni-repair"]);
        expect(env.CNI_REPAIR_LEADER_ELECTION_NAMESPACE).to.equal("cni-repair");
        const [budget] = objectsOfKind<V1PodDisruptionBudget>(render(overlay), "PodDisruptionBudget");
        expect(budget?.spec?.maxUnavailable).to.equal(1);
        expect(budget?.spec?.selector?.matchLabels).to.deep.equal(workload.spec?.selector.matchLabels);
      }
    });

    it(`${overlay}: the pod is hardened, probed on the metrics port and given time to shut down`, () => {
      const pod = podSpec(overlay);
      const container = controllerContainer(render(overlay));
      expect(pod.serviceAccountName).to.equal("cni-repair");
      expect(pod.automountServiceAccountToken).to.equal(true);
      expect(pod.enableServiceLinks).to.equal(false);
      expect(pod.hostNetwork ?? false).to.equal(false);
      expect(pod.hostPID ?? false).to.equal(false);
      expect(pod.volumes ?? []).to.deep.equal([]);
      expect(pod.securityContext).to.deep.include({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
      expect(container.securityContext).to.deep.equal({
        allowPrivilegeEscalation: false,
        privileged: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ["ALL"] },
      });

      const { args } = podCommand(container, PLACEMENT);
      expect(args).to.include("--http-port=8080");
      expect(container.ports).to.deep.equal([{ name: "metrics", containerPort: 8080, protocol: "TCP" }]);
      expect(container.livenessProbe?.httpGet).to.deep.equal({ path: "/healthz", port: "metrics" });
      expect(container.readinessProbe?.httpGet).to.deep.equal({ path: "/readyz", port: "metrics" });

      const shutdown = args.find((arg) => arg.startsWith("--shutdown-timeout="));
      expect(shutdown).to.equal("--shutdown-timeout=20s");
      expect(pod.terminationGracePeriodSeconds).to.be.at.least(20 + 5);

      const { requests, limits } = container.resources ?? {};
      expect(requests?.cpu).to.be.a("string");
      expect(requests?.memory).to.be.a("string");
      // Memory requested is memory reserved: a limit above the request would be an overcommit that OOM-kills.
      expect(limits?.memory).to.equal(requests?.memory);
      const nodeOptions = container.env?.find((variable) => variable.name === "NODE_OPTIONS")?.value ?? "";
      const heapMiB = Number(/--max-old-space-size=(\d+)/.exec(nodeOptions)?.[1]);
      expect(heapMiB, "NODE_OPTIONS --max-old-space-size").to.be.above(0);
      expect(heapMiB).to.be.below(mebibytes(limits?.memory ?? ""));
    });

    it(`${overlay}: admits ingress only to the metrics port, which the Service exposes`, () => {
      const [policy] = objectsOfKind<V1NetworkPolicy>(render(overlay), "NetworkPolicy");
      const podLabels = workloadOf(render(overlay)).spec?.template.metadata?.labels ?? {};
      expect(podLabels).to.include(policy?.spec?.podSelector?.matchLabels ?? { missing: "selector" });
      expect(policy?.spec?.policyTypes).to.deep.equal(["Ingress"]);
      expect(policy?.spec?.ingress).to.deep.equal([{ ports: [{ port: 8080, protocol: "TCP" }] }]);
      const [service] = objectsOfKind<V1Service>(render(overlay), "Service");
      expect(podLabels).to.include(service?.spec?.selector ?? { missing: "selector" });
      // What the monitoring overlay's ServiceMonitor selects (and takes the job name from).
      expect(service?.metadata?.labels).to.include({ "app.kubernetes.io/name": "cni-repair" });
      expect(service?.spec?.ports).to.deep.equal([
        { name: "metrics", port: 8080, targetPort: "metrics", protocol: "TCP" },
      ]);
    });
  }

  it("every overlay (and repair CronJob component) runs the image generate.sh renders with and the chart's appVersion, and names no other", () => {
    // The chart has no default repository (none is published yet): generate.sh names the one the overlays use.
    const generate = readFileSync(repositoryFile("manifests/generate.sh"), "utf8");
    const repository = /image\.repository=([^\s)]+)/.exec(generate)?.[1];
    expect(repository, "the repository generate.sh sets").to.be.a("string");
    const appVersion = /^appVersion: "([^"]+)"$/m.exec(
      readFileSync(repositoryFile("charts/cni-repair/Chart.yaml"), "utf8"),
    )?.[1];
    for (const overlay of OVERLAYS) {
      expect(controllerContainer(render(overlay)).image, overlay).to.equal(`${repository}:${appVersion}`);
    }
    const mentions = yamlFiles(manifestsDir()).filter((file) => /^\s*image:/m.test(readFileSync(file, "utf8")));
    const cronJobs = ["cluster", "dry-run", "label-only"].map((mode) => `repair-cronjob/${mode}/cronjob.yaml`);
    expect(mentions.map((file) => file.slice(manifestsDir().length + 1))).to.deep.equal([
      ...OVERLAYS.map((overlay) => `overlays/${overlay}/cni-repair.yaml`).sort(),
      ...cronJobs,
    ]);
    // The same image, so that a kustomization's `images:` moves the pass with the controller.
    for (const file of cronJobs) {
      const images = [...readFileSync(join(manifestsDir(), file), "utf8").matchAll(/^\s*image: (\S+)$/gm)];
      expect(
        images.map((match) => match[1]),
        file,
      ).to.deep.equal([`${repository}:${appVersion}`]);
    }
  });

  it("the DaemonSet and the Deployment share the same container, apart from args, env, resources and Node flags", () => {
    // The command differs only by the mode's Node flags (podCommand refuses any other command).
    const strip = (workload: V1Deployment | V1DaemonSet) => {
      const {
        args: _a,
        env: _e,
        resources: _r,
        command: _c,
        ...rest
      } = workload.spec?.template.spec?.containers[0] ?? { name: "" };
      return rest;
    };
    const daemonSet = workloadOf(render("per-node")) as V1DaemonSet;
    for (const overlay of ["cluster", "label-only", "dry-run"] as const) {
      const deployment = workloadOf(render(overlay)) as V1Deployment;
      expect(strip(deployment), overlay).to.deep.equal(strip(daemonSet));
    }
  });
});

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.ya?ml$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** Kubernetes memory quantities as the manifests write them (Mi or Gi). */
function mebibytes(quantity: string): number {
  const match = /^(\d+)(Mi|Gi)$/.exec(quantity);
  if (!match) throw new Error(`unexpected memory quantity ${JSON.stringify(quantity)}`);
  return Number(match[1]) * (match[2] === "Gi" ? 1024 : 1);
}
