// Every install step the docs show (README "Install", docs/operations.md, docs/helm-values.md,
// docs/startup-taints.md), read from the docs and run exactly as written against the real API server, each followed by
// a check of what it says it does: the live workload's kind, mode, rules and image, the values it sets, and, for the
// modes whose token may delete, the installed meshed-pods policy deleting a broken pod of each enabled mesh and
// refusing the others. A documented step this test cannot interpret fails it: add a check with the step.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { V1Container, V1Namespace, V1PodTemplateSpec } from "@kubernetes/client-node";
import { expect } from "chai";
import { parseConfig } from "../../../src/config/config.js";
import { envVarName, flagNames } from "../../../src/config/flags.js";
import {
  type DocumentedStep,
  documentedSteps,
  INSTALL_DOCS,
  localKustomization,
  runDocumentedCommand,
  shellWords,
} from "../../harness/documented-installs.js";
import { helm } from "../../harness/helm.js";
import { kubectl } from "../../harness/kubectl.js";
import { installMonitoringCrds, removeMonitoringCrds } from "../../harness/monitoring-crds.js";
import { applyNamespace, INSTALL, type Overlay, podCommand, uninstall } from "../../harness/overlays.js";
import { ownedTempDir } from "../../harness/owned-dirs.js";
import { expectPolicyFollowsPresets } from "../../harness/preset-admission.js";
import type { Preset } from "../../harness/presets.js";
import { serviceAccountToken } from "../../harness/service-account-files.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

const RELEASE = "cni-repair";
const ENFORCE = "pod-security.kubernetes.io/enforce";
const WARN = "pod-security.kubernetes.io/warn";
const CONTROLLER_MODE: Record<Overlay, string> = {
  cluster: "delete",
  "per-node": "delete",
  "label-only": "label",
  "dry-run": "report",
};

/** What an install should be running after a step: the chart's or overlay's mode, its presets and image. */
type Expected = {
  mode: Overlay;
  presets: Preset[];
  image: string;
  env?: Record<string, string>;
  startupTaint?: string;
  noFixedUid?: boolean;
  /** The doc's last `helm install`, while that release is what runs (not a kustomize install after it). */
  helmInstall?: DocumentedStep;
};
const DEFAULTS: Expected = { mode: "cluster", presets: ["istio"], image: "ghcr.io/cni-repair/cni-repair" };

const get = async <T>(what: string): Promise<T | undefined> => {
  const out = await kubectl(["get", what, "--namespace", INSTALL.namespace, "--ignore-not-found", "-o", "json"], {
    plane: controlPlane(),
  });
  return out.trim() ? (JSON.parse(out) as T) : undefined;
};

/** The live workload of the mode, as the API server stores it. */
async function liveWorkload(mode: Overlay): Promise<{ template: V1PodTemplateSpec; container: V1Container }> {
  const kind = mode === "per-node" ? "daemonset" : "deployment";
  const workload = await get<{ spec: { template: V1PodTemplateSpec } }>(`${kind}/cni-repair`);
  expect(workload, `${kind}/cni-repair`).to.not.equal(undefined);
  const template = workload?.spec.template as V1PodTemplateSpec;
  return { template, container: template.spec?.containers[0] as V1Container };
}

async function expectRunning(expected: Expected): Promise<void> {
  const { template, container } = await liveWorkload(expected.mode);
  const { args, env } = podCommand(container, { namespace: INSTALL.namespace, nodeName: "node-a", podName: "p-0" });
  const { config } = parseConfig(args, env);
  expect(env.CNI_REPAIR_MODE).to.equal(CONTROLLER_MODE[expected.mode]);
  expect(config.rules.map((rule) => rule.name)).to.deep.equal(expected.presets);
  expect(container.image?.startsWith(`${expected.image}:`), container.image).to.equal(true);
  for (const [name, value] of Object.entries(expected.env ?? {})) {
    expect(env[name], name).to.equal(value);
    // A variable for a flag the workload also passes as an argument would be overridden or refused.
    const flag = flagNames.find((candidate) => envVarName(candidate) === name);
    expect(flag, `${name} is a flag's variable`).to.not.equal(undefined);
    expect(
      args.filter((arg) => arg.startsWith(`--${flag}=`)),
      `${name} and the argument --${flag}`,
    ).to.deep.equal([]);
  }
  if (expected.startupTaint) {
    expect(config.startupTaint?.mode).to.equal(expected.startupTaint);
    // The nodes' policy comes with the permission to patch them: not in dry-run, which only reports.
    const policy = await get("validatingadmissionpolicy/cni-repair-startup-taints");
    expect(policy !== undefined, "the startup-taints policy").to.equal(expected.mode !== "dry-run");
  }
  if (expected.noFixedUid) expect(JSON.stringify(template)).to.not.match(/runAsUser|runAsGroup|fsGroup/);
  // The policy checked with the token of the modes that may delete with it cluster-wide (label-only has no delete
  // permission; per-node's token would need binding to a pod on a node).
  if (expected.mode === "cluster" || expected.mode === "dry-run") {
    const plane = controlPlane();
    const token = await serviceAccountToken(plane, INSTALL.namespace, INSTALL.serviceAccount);
    await expectPolicyFollowsPresets(plane, token, expected.presets);
  }
}

/** No release and no object of an earlier step: a reader starting on this line. */
async function freshCluster(): Promise<void> {
  const plane = controlPlane();
  await helm(["uninstall", RELEASE, "--namespace", INSTALL.namespace, "--ignore-not-found", "--wait"], { plane });
  await uninstall(plane);
}

/** The values a helm command sets, applied over the release's values (the install's, or --reset-then-reuse-values). */
function helmValues(words: readonly string[], before: Expected): Expected {
  const expected: Expected = { ...before };
  for (let i = 0; i < words.length; i++) {
    const word = words[i] ?? "";
    const next = words[i + 1] ?? "";
    if (word === "-f" && next.endsWith("ci/openshift-values.yaml")) expected.noFixedUid = true;
    if (word !== "--set") continue;
    const [key, value = ""] = next.split(/=(.*)/s);
    if (key === "mode") expected.mode = value as Overlay;
    else if (key === "presets") expected.presets = value.replace(/[{}]/g, "").split(",") as Preset[];
    else if (key === "image.repository") expected.image = value;
    else if (key === "startupTaint.mode") expected.startupTaint = value;
    else throw new Error(`--set ${next}: no check for this value`);
  }
  return expected;
}

describe("docs: every documented install step does what it says", function () {
  this.timeout(15 * 60_000);

  before(async () => {
    await installMonitoringCrds(controlPlane());
    await freshCluster();
  });

  after(async () => {
    await freshCluster();
    await removeMonitoringCrds(controlPlane());
  });

  for (const doc of INSTALL_DOCS) {
    it(`${doc}: each install step, in order`, async () => {
      const steps = documentedSteps(doc);
      expect(steps, `${doc} shows install steps`).to.not.deep.equal([]);
      let running: Expected = { ...DEFAULTS };
      for (const step of steps) running = await runAndCheck(step, running);
    });
  }
});

/** Runs one step (from a fresh cluster where the step starts an install) and checks it; the state it leaves. */
async function runAndCheck(step: DocumentedStep, before: Expected): Promise<Expected> {
  const plane = controlPlane();
  const where = `${step.doc}: ${step.kind === "command" ? step.text : "the kustomization"}`;
  if (step.kind === "kustomization") {
    await freshCluster();
    await applyNamespace(plane);
    const dir = ownedTempDir("cni-repair-doc-kustomization-");
    writeFileSync(join(dir, "kustomization.yaml"), localKustomization(step.text, dir));
    await kubectl(["apply", "--server-side", "-k", dir], { plane });
    const expected: Expected = {
      mode: (/manifests\/overlays\/([a-z-]+)/.exec(step.text)?.[1] ?? "cluster") as Overlay,
      presets: (/manifests\/presets\/([a-z+-]+)/.exec(step.text)?.[1] ?? "istio").split("+") as Preset[],
      image: /newName: (\S+)/.exec(step.text)?.[1] ?? DEFAULTS.image,
      env: Object.fromEntries(
        [...step.text.matchAll(/\{ name: (CNI_REPAIR_[A-Z_]+), value: "([^"]*)" \}/g)].map((m) => [m[1], m[2]]),
      ),
    };
    await expectRunning(expected).catch(rethrowAt(where));
    return expected;
  }
  const words = shellWords(step.text);
  const [tool, verb] = words;
  const overlay = /-k manifests\/overlays\/([a-z-]+)$/.exec(step.text)?.[1] as Overlay | undefined;
  if (tool === "helm" && verb === "install") {
    // The chart requires the image (none is published yet): every documented install names one.
    expect(
      words.some((word) => word.startsWith("image.repository=")),
      `${where}: sets image.repository`,
    ).to.equal(true);
    await freshCluster();
    await runDocumentedCommand(plane, step.text).catch(rethrowAt(where));
    const expected = { ...helmValues(words, { ...DEFAULTS }), helmInstall: step };
    await expectRunning(expected).catch(rethrowAt(where));
    return expected;
  }
  if (tool === "helm" && verb === "upgrade") {
    // docs/upgrading.md's advice: the new chart's defaults under the release's values, never --reuse-values alone.
    expect(words, where).to.include("--reset-then-reuse-values");
    expect(words, where).to.not.include("--reuse-values");
    // An upgrade of the release the doc's `helm install` made, also when a kustomize alternative was shown between.
    const release = before.helmInstall ? before : await runAndCheck(lastHelmInstall(step), DEFAULTS);
    await runDocumentedCommand(plane, step.text).catch(rethrowAt(where));
    const expected = helmValues(words, release);
    await expectRunning(expected).catch(rethrowAt(where));
    return expected;
  }
  if (
    /^kubectl delete -k manifests\/overlays\/[a-z-]+ && kubectl apply -k manifests\/overlays\/[a-z-]+$/.test(step.text)
  ) {
    const [from] = /overlays\/([a-z-]+)/.exec(step.text)?.slice(1) ?? [];
    // The switch starts from the old mode's overlay, installed as the docs install it.
    await freshCluster();
    await runDocumentedCommand(plane, `kubectl apply -k manifests/overlays/${from}`).catch(rethrowAt(where));
    await runDocumentedCommand(plane, step.text).catch(rethrowAt(where));
    const expected: Expected = { ...DEFAULTS, mode: overlay as Overlay };
    const fromKind = from === "per-node" ? "daemonset" : "deployment";
    if (fromKind !== (overlay === "per-node" ? "daemonset" : "deployment")) {
      expect(await get(`${fromKind}/cni-repair`), `${where}: the old mode's workload`).to.equal(undefined);
    }
    await expectRunning(expected).catch(rethrowAt(where));
    return expected;
  }
  if (tool === "kubectl" && overlay) {
    // The docs list the overlays as alternatives: each line starts an install of its own.
    await freshCluster();
    await runDocumentedCommand(plane, step.text).catch(rethrowAt(where));
    const expected: Expected = { ...DEFAULTS, mode: overlay };
    await expectRunning(expected).catch(rethrowAt(where));
    return expected;
  }
  if (step.text === `kubectl create namespace ${INSTALL.namespace}`) {
    // This control plane has no namespace controller, so an earlier test's namespace cannot go away: a reader's
    // fresh cluster is the namespace without the labels the next step adds.
    await freshCluster();
    await kubectl(["label", "namespace", INSTALL.namespace, `${ENFORCE}-`, `${WARN}-`], { plane });
    await runDocumentedCommand(plane, step.text).catch((error: Error) => {
      if (!error.message.includes("AlreadyExists")) rethrowAt(where)(error);
    });
    return before;
  }
  if (step.text === `kubectl label namespace ${INSTALL.namespace} ${ENFORCE}=restricted`) {
    await runDocumentedCommand(plane, step.text).catch(rethrowAt(where));
    await expectRestrictedNamespace(where);
    return before;
  }
  if (/^kubectl apply (--server-side )?-k manifests\/namespace$/.test(step.text)) {
    await runDocumentedCommand(plane, step.text).catch(rethrowAt(where));
    await expectRestrictedNamespace(where);
    return before;
  }
  if (/^kubectl apply (--server-side )?-k manifests\/monitoring$/.test(step.text)) {
    await runDocumentedCommand(plane, step.text).catch(rethrowAt(where));
    for (const object of ["servicemonitor/cni-repair", "prometheusrule/cni-repair", "configmap/cni-repair-dashboard"]) {
      expect(await get(object), `${where}: ${object}`).to.not.equal(undefined);
    }
    return before;
  }
  throw new Error(`${where}: a documented install step with no check here; add one`);
}

/**
 * The `helm install` a `helm upgrade` upgrades: the doc's last one before it, or, on a page that only upgrades
 * (startup-taints.md), the install of docs/helm-values.md.
 */
function lastHelmInstall(upgrade: DocumentedStep): DocumentedStep {
  const isInstall = (step: DocumentedStep) => step.kind === "command" && step.text.startsWith("helm install ");
  const steps = documentedSteps(upgrade.doc);
  const install =
    steps
      .slice(
        0,
        steps.findIndex((step) => step.text === upgrade.text),
      )
      .findLast(isInstall) ?? documentedSteps("docs/helm-values.md").find(isInstall);
  if (!install) throw new Error(`${upgrade.doc}: ${upgrade.text} upgrades a release no step installs`);
  return install;
}

async function expectRestrictedNamespace(where: string): Promise<void> {
  const namespace = await get<V1Namespace>(`namespace/${INSTALL.namespace}`);
  expect(namespace?.metadata?.labels?.[ENFORCE], where).to.equal("restricted");
}

const rethrowAt = (where: string) => (error: Error) => {
  throw new Error(`${where}\n${error.message}`);
};
