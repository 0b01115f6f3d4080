// The startup-taints admission policy as the chart renders it for a mode (and startup-taint mode), applied with the RBAC and ServiceAccount
// of the same rendering (not the chart's other policies, which judge pods); and a transport acting as that account.
import { randomBytes } from "node:crypto";
import { type KubernetesObject, KubernetesObjectApi } from "@kubernetes/client-node";
import { expect } from "chai";
import { loadAll } from "js-yaml";
import type { StartupTaintMode } from "../../../src/config/startup-taint.js";
import { KubeConfigCredentials } from "../../../src/kube/kubeconfig-credentials.js";
import { KubeTransport } from "../../../src/kube/transport.js";
import type { ControlPlane } from "../../harness/control-plane.js";
import { chartDir, helm, IMAGE_VALUES, setValues } from "../../harness/helm.js";

export type TaintPolicyInstall = {
  /** The policy's name, as the API server's refusals name it. */
  readonly policy: string;
  readonly namespace: string;
  readonly serviceAccount: string;
  /** A transport acting as the chart's ServiceAccount with this token. */
  as(token: string): KubeTransport;
  remove(): Promise<void>;
};

export async function installTaintPolicy(
  plane: ControlPlane,
  namespace: string,
  mode: "cluster" | "per-node",
  startupTaintMode: StartupTaintMode = "bootstrap-only",
): Promise<TaintPolicyInstall> {
  const objects = KubernetesObjectApi.makeApiClient(plane.kubeConfig());
  const release = `vap-${randomBytes(3).toString("hex")}`;
  const yaml = await helm([
    "template",
    release,
    chartDir(),
    "--namespace",
    namespace,
    "--set",
    `startupTaint.mode=${startupTaintMode}`,
    "--set",
    `mode=${mode}`,
    ...setValues(IMAGE_VALUES),
  ]);
  const wanted = new Set([
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
  ]);
  const rendered = (loadAll(yaml) as KubernetesObject[]).filter(
    (o) =>
      o &&
      wanted.has(o.kind ?? "") &&
      (!o.kind?.startsWith("ValidatingAdmissionPolicy") || o.metadata?.name?.endsWith("-startup-taints")),
  );
  const policy = rendered.find((o) => o.kind === "ValidatingAdmissionPolicy")?.metadata?.name ?? "";
  expect(policy).to.equal(`${release}-cni-repair-startup-taints`);
  const applied: KubernetesObject[] = [];
  for (const object of rendered) {
    if (object.kind === "ServiceAccount") object.metadata = { ...object.metadata, namespace };
    applied.push(await objects.create(object));
  }
  const serviceAccount = rendered.find((o) => o.kind === "ServiceAccount")?.metadata?.name ?? "";
  return {
    policy,
    namespace,
    serviceAccount,
    as: (token) =>
      new KubeTransport(
        new KubeConfigCredentials(plane.kubeConfig(token, `system:serviceaccount:${namespace}:${serviceAccount}`)),
        { userAgent: "cni-repair/test" },
      ),
    remove: async () => {
      for (const object of applied.reverse()) await objects.delete(object).catch(() => {});
    },
  };
}
