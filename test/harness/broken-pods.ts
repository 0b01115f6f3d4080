// Creates pods in the states the tests need: broken by the CNI race, healthy, or otherwise not ours to touch.
import type { CoreV1Api, V1Pod } from "@kubernetes/client-node";
import { EventsV1Api } from "@kubernetes/client-node";
import type { ControlPlane } from "./control-plane.js";
import {
  type Mesh,
  meshedPod,
  type PodSpecOptions,
  VALIDATOR,
  type ValidatorOutcome,
  validatorStatus,
  writePodStatus,
} from "./pod-fixtures.js";

export type PodState = {
  /** Defaults to a crash loop with the mesh's exit code. */
  readonly validator?: ValidatorOutcome;
  /** The init container the status is written for; defaults to the mesh's validator. */
  readonly container?: string;
  readonly phase?: "Pending" | "Running" | "Failed" | "Succeeded";
};

/** Creates the pod (scheduled, owned by a ReplicaSet unless told otherwise) and writes its validator status. */
export async function createPodInState(
  api: CoreV1Api,
  spec: Omit<PodSpecOptions, "nodeName"> & { nodeName?: string /** No controlling owner at all. */; bare?: boolean },
  state: PodState = {},
): Promise<V1Pod> {
  const mesh: Mesh = spec.mesh ?? "istio";
  const meshValidator = mesh === "none" ? VALIDATOR.istio : VALIDATOR[mesh];
  const { bare, ...podSpec } = spec;
  const owner = bare ? {} : { owner: spec.owner ?? { kind: "ReplicaSet", name: "app-7d9f" } };
  await api.createNamespacedPod({
    namespace: spec.namespace,
    body: meshedPod({ nodeName: "node-a", ...podSpec, ...owner }),
  });
  return await writePodStatus(api, spec, {
    phase: state.phase ?? "Pending",
    initContainerStatuses: [
      validatorStatus(
        state.container ?? meshValidator.container,
        state.validator ?? { kind: "crashloop", exitCode: meshValidator.exitCode },
      ),
    ],
  });
}

/** Events recorded by cni-repair about pods in the namespace, as "pod:reason" strings. */
export async function repairEvents(plane: ControlPlane, namespace: string): Promise<string[]> {
  const events = plane.kubeConfig().makeApiClient(EventsV1Api);
  const list = await events.listNamespacedEvent({ namespace });
  return list.items
    .filter((event) => event.reportingController === "cni-repair")
    .map((event) => `${event.regarding?.name}:${event.reason}`);
}
