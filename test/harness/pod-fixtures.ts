// Pod objects shaped like what the meshes' injectors produce, and the statuses a kubelet would write.
import { createHash } from "node:crypto";
import type { CoreV1Api, V1ContainerStatus, V1Pod, V1PodCondition } from "@kubernetes/client-node";
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";

export type Mesh = "istio" | "linkerd" | "none";

export const VALIDATOR: Record<Exclude<Mesh, "none">, { container: string; exitCode: number }> = {
  istio: { container: "istio-validation", exitCode: 126 },
  linkerd: { container: "linkerd-network-validator", exitCode: 95 },
};

export type PodSpecOptions = {
  readonly name: string;
  readonly namespace: string;
  readonly nodeName?: string;
  readonly mesh?: Mesh;
  readonly restartPolicy?: "Always" | "OnFailure" | "Never";
  /** The controlling owner; omitted for a bare pod. Its uid is made up: the API server does not check it. */
  readonly owner?: { kind: string; name: string; apiVersion?: string };
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  readonly hostNetwork?: boolean;
};

/** A pod as the mesh's injector leaves it: the marker plus the validator init container. */
export function meshedPod(options: PodSpecOptions): V1Pod {
  const mesh = options.mesh ?? "istio";
  const annotations: Record<string, string> = { ...options.annotations };
  const labels: Record<string, string> = { app: options.name, ...options.labels };
  if (mesh === "istio") annotations["sidecar.istio.io/status"] = '{"initContainers":["istio-validation"]}';
  if (mesh === "linkerd") labels["linkerd.io/control-plane-ns"] = "linkerd";
  const initContainers =
    mesh === "none" ? [] : [{ name: VALIDATOR[mesh].container, image: "registry.invalid/validator:1" }];
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: options.name,
      namespace: options.namespace,
      labels,
      annotations,
      ...(options.owner && {
        ownerReferences: [
          {
            apiVersion: options.owner.apiVersion ?? "apps/v1",
            kind: options.owner.kind,
            name: options.owner.name,
            uid: ownerUid(options.owner),
            controller: true,
          },
        ],
      }),
    },
    spec: {
      ...(options.nodeName && { nodeName: options.nodeName }),
      restartPolicy: options.restartPolicy ?? "Always",
      ...(options.hostNetwork && { hostNetwork: true }),
      initContainers,
      containers: [{ name: "app", image: "registry.invalid/app:1" }],
    },
  };
}

/** A stable made-up UID per owner kind and name, so pods of one owner share it and other owners differ. */
function ownerUid(owner: { kind: string; name: string }): string {
  const hex = createHash("sha256").update(`${owner.kind}/${owner.name}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export type ValidatorOutcome =
  /** Init:CrashLoopBackOff: the last run (by default 3, finished now) failed with the code; the kubelet waits. */
  | { kind: "crashloop"; exitCode: number; restarts?: number; finishedAt?: Date }
  /** restartPolicy Never: the current state is the failed run. */
  | { kind: "failed"; exitCode: number }
  | { kind: "succeeded" };

/**
 * The init-container status a kubelet would report for the validator: the structure of the statuses recorded from a
 * real kubelet (test/fixtures/kubelet) without the runtime's identities (containerID, a real imageID); checked by
 * test/unit/detect/hand-written-statuses.test.ts.
 */
export function validatorStatus(container: string, outcome: ValidatorOutcome): V1ContainerStatus {
  const finishedAt = (outcome.kind === "crashloop" && outcome.finishedAt) || new Date();
  const terminated = (exitCode: number) => ({
    exitCode,
    reason: exitCode === 0 ? "Completed" : "Error",
    startedAt: finishedAt,
    finishedAt,
  });
  const base = { name: container, image: "registry.invalid/validator:1", imageID: "", ready: false, started: false };
  switch (outcome.kind) {
    case "crashloop":
      return {
        ...base,
        restartCount: outcome.restarts ?? 3,
        state: { waiting: { reason: "CrashLoopBackOff", message: "back-off restarting failed container" } },
        lastState: { terminated: terminated(outcome.exitCode) },
      };
    case "failed":
      return { ...base, restartCount: 0, state: { terminated: terminated(outcome.exitCode) }, lastState: {} };
    case "succeeded":
      return { ...base, ready: true, restartCount: 0, state: { terminated: terminated(0) }, lastState: {} };
  }
}

/** A container whose only run ended with exit 0, as the kubelet reports it in a Succeeded pod. */
export function completedContainer(name: string, image: string): V1ContainerStatus {
  const now = new Date();
  return {
    name,
    image,
    imageID: "",
    ready: false,
    started: false,
    restartCount: 0,
    state: { terminated: { exitCode: 0, reason: "Completed", startedAt: now, finishedAt: now } },
    lastState: {},
  };
}

/** Writes status the way the kubelet does, through the pods/status subresource. Returns the updated pod. */
export async function writePodStatus(
  api: CoreV1Api,
  pod: { namespace: string; name: string },
  status: {
    phase?: string;
    conditions?: V1PodCondition[];
    initContainerStatuses?: V1ContainerStatus[];
    containerStatuses?: V1ContainerStatus[];
  },
): Promise<V1Pod> {
  return await api.patchNamespacedPodStatus(
    { name: pod.name, namespace: pod.namespace, body: { status } },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  );
}
