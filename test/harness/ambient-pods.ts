// Pods as Istio's ambient mode leaves them: no validator, just the CNI agent's redirection annotation.
import {
  type CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1ContainerStatus,
  type V1Pod,
  type V1PodCondition,
} from "@kubernetes/client-node";
import { meshedPod, type PodSpecOptions, writePodStatus } from "./pod-fixtures.js";

export const REDIRECTION = "ambient.istio.io/redirection";
export const DATAPLANE_MODE = "istio.io/dataplane-mode";

export type AmbientPodOptions = Omit<PodSpecOptions, "mesh" | "nodeName"> & {
  readonly nodeName?: string;
  /** The redirection annotation's value; omitted: the annotation is missing. */
  readonly redirection?: "enabled" | "pending";
  /**
   * When its sandbox was set up (the kubelet's PodReadyToStartContainers condition) and its app container started;
   * omitted: no sandbox yet.
   */
  readonly runningSince?: Date;
  /** The app container: running since runningSince (default), or crash-looping (restarted, waiting to again). */
  readonly app?: "running" | "crash-looping";
  /** The pod's phase (default Running); Failed or Succeeded: it has finished. */
  readonly phase?: "Running" | "Failed" | "Succeeded";
};

/** Creates an ambient-style pod (owned by a ReplicaSet) and, if given, reports its sandbox and container. */
export async function createAmbientPod(api: CoreV1Api, options: AmbientPodOptions): Promise<V1Pod> {
  const { redirection, runningSince, app, phase, ...spec } = options;
  await api.createNamespacedPod({
    namespace: spec.namespace,
    body: meshedPod({
      nodeName: "node-a",
      owner: { kind: "ReplicaSet", name: `${spec.name}-rs` },
      ...spec,
      mesh: "none",
      annotations: { ...spec.annotations, ...(redirection && { [REDIRECTION]: redirection }) },
    }),
  });
  if (!runningSince) return await api.readNamespacedPod({ namespace: spec.namespace, name: spec.name });
  return await writePodStatus(api, spec, {
    phase: phase ?? "Running",
    conditions: [sandboxReadyCondition(runningSince)],
    containerStatuses: [
      app === "crash-looping" ? crashLoopingApp(1, runningSince) : runningApp(runningSince, phase !== undefined),
    ],
  });
}

/** The kubelet's condition once the pod's sandbox (and so its network) is set up. */
export const sandboxReadyCondition = (since: Date): V1PodCondition => ({
  type: "PodReadyToStartContainers",
  status: "True",
  lastTransitionTime: since,
});

/** The app running since then, or (finished) its run ended with exit code 1. */
export const runningApp = (since: Date, finished: boolean): V1ContainerStatus => ({
  name: "app",
  image: "registry.invalid/app:1",
  imageID: "",
  ready: !finished,
  restartCount: 0,
  started: !finished,
  state: finished
    ? { terminated: { exitCode: 1, reason: "Error", startedAt: since, finishedAt: new Date() } }
    : { running: { startedAt: since } },
  lastState: {},
});

/** The app after `restarts` runs that each crashed: waiting in CrashLoopBackOff, the last run in lastState. */
export const crashLoopingApp = (restarts: number, sandboxSince: Date): V1ContainerStatus => {
  const lastStart = new Date(Math.max(sandboxSince.getTime(), Date.now() - 2_000));
  return {
    name: "app",
    image: "registry.invalid/app:1",
    imageID: "",
    ready: false,
    restartCount: restarts,
    started: false,
    state: { waiting: { reason: "CrashLoopBackOff", message: "back-off restarting failed container" } },
    lastState: { terminated: { exitCode: 1, reason: "Error", startedAt: lastStart, finishedAt: new Date() } },
  };
};

/** The kubelet restarting a crash-looping app once more: a new status, same sandbox. */
export async function crashAgain(
  api: CoreV1Api,
  pod: { namespace: string; name: string },
  restarts: number,
  sandboxSince: Date,
): Promise<void> {
  await writePodStatus(api, pod, { containerStatuses: [crashLoopingApp(restarts, sandboxSince)] });
}

/** What Istio's CNI node agent does once it has set up the pod's redirection to ztunnel. */
export async function markEnrolled(api: CoreV1Api, pod: { namespace: string; name: string }): Promise<void> {
  await api.patchNamespacedPod(
    { ...pod, body: { metadata: { annotations: { [REDIRECTION]: "enabled" } } } },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  );
}

/** Sets (or, with null, removes) the ambient label on a namespace or a pod, as an operator adopting ambient would. */
export async function labelAmbient(
  api: CoreV1Api,
  target: { readonly namespace: string; readonly pod?: string },
  value: string | null,
): Promise<void> {
  const body = { metadata: { labels: { [DATAPLANE_MODE]: value } } };
  const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);
  if (target.pod === undefined) await api.patchNamespace({ name: target.namespace, body }, mergePatch);
  else await api.patchNamespacedPod({ namespace: target.namespace, name: target.pod, body }, mergePatch);
}

/** The node's ztunnel pod (a DaemonSet pod, itself out of ambient scope); Ready only once marked so. */
export async function createZtunnel(api: CoreV1Api, options: { namespace: string; nodeName: string }): Promise<string> {
  const name = `ztunnel-${options.nodeName}`;
  await api.createNamespacedPod({
    namespace: options.namespace,
    body: meshedPod({
      name,
      namespace: options.namespace,
      nodeName: options.nodeName,
      mesh: "none",
      owner: { kind: "DaemonSet", name: "ztunnel" },
      labels: { app: "ztunnel", [DATAPLANE_MODE]: "none" },
    }),
  });
  return name;
}
