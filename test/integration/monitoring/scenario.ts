// The monitoring test's cluster: pods that get repaired, held for each kind of reason, or cannot be deleted.
import {
  AdmissionregistrationV1Api,
  CoordinationV1Api,
  type CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  V1MicroTime,
} from "@kubernetes/client-node";
import { createPodInState } from "../../harness/broken-pods.js";
import { createCniAgent } from "../../harness/cni-agents.js";
import type { ControlPlane } from "../../harness/control-plane.js";
import { meshedPod, validatorStatus, writePodStatus } from "../../harness/pod-fixtures.js";

/** Pods with this label cannot be deleted (a ValidatingAdmissionPolicy refuses): their repairs fail. */
export const UNDELETABLE_LABEL = "cni-repair.test/undeletable";

export type Nodes = {
  /** CNI agents Ready for an hour: broken pods here are deleted. */
  readonly ready: string;
  /** CNI agent not Ready: broken pods here are held. */
  readonly agentNotReady: string;
  /** Agents Ready, but every meshed pod on it broken: its storm breaker opens. */
  readonly storm: string;
};

export const nodesFor = (namespace: string): Nodes => ({
  ready: `${namespace}-ready`,
  agentNotReady: `${namespace}-starting`,
  storm: `${namespace}-storm`,
});

/** Agents on every node and enough healthy meshed pods that only the storm node's breaker opens. */
export async function createHealthyCluster(api: CoreV1Api, namespace: string, healthy: number): Promise<void> {
  const nodes = nodesFor(namespace);
  const anHourAgo = new Date(Date.now() - 60 * 60_000);
  for (const mesh of ["istio", "linkerd"] as const) {
    await createCniAgent(api, { namespace, mesh, nodeName: nodes.ready, readySince: anHourAgo });
    await createCniAgent(api, { namespace, mesh, nodeName: nodes.storm, readySince: anHourAgo });
    await createCniAgent(api, { namespace, mesh, nodeName: nodes.agentNotReady });
  }
  for (let i = 0; i < healthy; i++) {
    await createPodInState(
      api,
      { namespace, name: `healthy-${i}`, nodeName: nodes.ready, mesh: i % 2 === 0 ? "istio" : "linkerd" },
      { validator: { kind: "succeeded" }, phase: "Running" },
    );
  }
}

/** The broken pods: what each becomes is in its name. */
export async function createBrokenPods(api: CoreV1Api, namespace: string, stormPods: number): Promise<void> {
  const nodes = nodesFor(namespace);
  await createPodInState(api, { namespace, name: "deleted-istio", nodeName: nodes.ready });
  await createPodInState(api, { namespace, name: "deleted-linkerd", nodeName: nodes.ready, mesh: "linkerd" });
  await createPodInState(api, {
    namespace,
    name: "fails-undeletable",
    nodeName: nodes.ready,
    labels: { [UNDELETABLE_LABEL]: "true" },
  });
  await createPodInState(
    api,
    { namespace, name: "held-terminal", nodeName: nodes.ready, restartPolicy: "Never" },
    { validator: { kind: "failed", exitCode: 126 }, phase: "Failed" },
  );
  await api.createNamespacedPod({
    namespace,
    body: meshedPod({ namespace, name: "held-bare", nodeName: nodes.ready }),
  });
  await writePodStatus(
    api,
    { namespace, name: "held-bare" },
    {
      phase: "Pending",
      initContainerStatuses: [validatorStatus("istio-validation", { kind: "crashloop", exitCode: 126 })],
    },
  );
  await createPodInState(api, { namespace, name: "held-agent-not-ready", nodeName: nodes.agentNotReady });
  for (let i = 0; i < stormPods; i++) {
    await createPodInState(api, { namespace, name: `held-storm-${i}`, nodeName: nodes.storm });
  }
}

/** A ValidatingAdmissionPolicy (in-process CEL, no webhook) refusing to delete labelled pods of the namespace. */
export async function refuseDeletes(plane: ControlPlane, namespace: string): Promise<() => Promise<void>> {
  const admission = plane.kubeConfig().makeApiClient(AdmissionregistrationV1Api);
  const name = `${namespace}-undeletable`;
  await admission.createValidatingAdmissionPolicy({
    body: {
      metadata: { name },
      spec: {
        failurePolicy: "Fail",
        matchConstraints: {
          resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["DELETE"], resources: ["pods"] }],
        },
        validations: [{ expression: "false", message: "this test pod cannot be deleted", reason: "Forbidden" }],
      },
    },
  });
  await admission.createValidatingAdmissionPolicyBinding({
    body: {
      metadata: { name },
      spec: {
        policyName: name,
        validationActions: ["Deny"],
        matchResources: {
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } },
          objectSelector: { matchLabels: { [UNDELETABLE_LABEL]: "true" } },
        },
      },
    },
  });
  return async () => {
    await admission.deleteValidatingAdmissionPolicyBinding({ name });
    await admission.deleteValidatingAdmissionPolicy({ name });
  };
}

/** A Lease held by another replica that never lets go, until release() empties its holder. */
export async function leaseHeldElsewhere(
  plane: ControlPlane,
  namespace: string,
  name: string,
): Promise<{ release: () => Promise<void> }> {
  const leases = plane.kubeConfig().makeApiClient(CoordinationV1Api);
  const now = new V1MicroTime();
  await leases.createNamespacedLease({
    namespace,
    body: {
      metadata: { name, namespace },
      spec: { holderIdentity: "another-replica", leaseDurationSeconds: 3600, acquireTime: now, renewTime: now },
    },
  });
  return {
    release: async () => {
      await leases.patchNamespacedLease(
        { namespace, name, body: { spec: { holderIdentity: "" } } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
    },
  };
}
