// Pods as Istio's ambient mode leaves them: no validator, just the CNI agent's redirection annotation.
import type { CoreV1Api, V1Pod } from "@kubernetes/client-node";
import { meshedPod, type PodSpecOptions, writePodStatus } from "./pod-fixtures.js";

export const REDIRECTION = "ambient.istio.io/redirection";
export const DATAPLANE_MODE = "istio.io/dataplane-mode";

export type AmbientPodOptions = Omit<PodSpecOptions, "mesh" | "nodeName"> & {
  readonly nodeName?: string;
  /** The redirection annotation's value; omitted: the annotation is missing. */
  readonly redirection?: "enabled" | "pending";
  /** When its containers started running; omitted: not running yet. */
  readonly runningSince?: Date;
};

/** Creates an ambient-style pod (owned by a ReplicaSet) and, if given, reports its container running. */
export async function createAmbientPod(api: CoreV1Api, options: AmbientPodOptions): Promise<V1Pod> {
  const { redirection, runningSince, ...spec } = options;
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
    phase: "Running",
    containerStatuses: [
      {
        name: "app",
        image: "registry.invalid/app:1",
        imageID: "",
        ready: true,
        restartCount: 0,
        started: true,
        state: { running: { startedAt: runningSince } },
      },
    ],
  });
}
