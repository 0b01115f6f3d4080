// Builds PodFacts for tests: a plain running pod by default, changed by small overrides.

import type { ContainerState, InitContainerFacts, PodFacts, Termination } from "../../src/detect/facts.js";

/** A termination as the kubelet reports it: exit 0 is "Completed", anything else "Error". */
export const exited = (
  exitCode: number,
  message?: string,
  finishedAtMs?: number,
  startedAtMs: number | undefined = finishedAtMs,
): Termination => ({
  exitCode,
  reason: exitCode === 0 ? "Completed" : "Error",
  message,
  startedAtMs,
  finishedAtMs,
});

export const init = (
  name: string,
  state: ContainerState,
  lastTermination?: Termination,
  restartCount = 0,
): InitContainerFacts => ({
  name,
  state,
  lastTermination,
  restartCount,
});

export function podFacts(overrides: Partial<PodFacts> = {}): PodFacts {
  return {
    namespace: "shop",
    name: "reviews-7d9f8b6c5-x2x4q",
    uid: "0b5c3f6e-6a43-4c59-9d1f-1d1c7a0c9e01",
    resourceVersion: "1000",
    nodeName: "node-a",
    phase: "Pending",
    restartPolicy: "Always",
    hostNetwork: false,
    staticPod: false,
    sandboxSinceMs: undefined,
    deleting: false,
    createdAtMs: Date.parse("2025-03-04T10:15:00Z"),
    owner: { kind: "ReplicaSet", name: "reviews-7d9f8b6c5", uid: "5a0e0e3c-2b7b-4c53-8f0f-3f4d3a1f1d11" },
    labels: {},
    annotations: {},
    initContainers: [],
    ...overrides,
  };
}

/** A pod told apart by its name: its UID is derived from it. */
export const namedPod = (name: string, overrides: Partial<PodFacts> = {}): PodFacts =>
  podFacts({ name, uid: `uid-${name}`, ...overrides });

let serial = 0;
/** A pod no other has been: a new name (`${prefix}-N`) and UID each call. */
export function uniquePod(overrides: Partial<PodFacts> = {}, prefix = "reviews"): PodFacts {
  serial++;
  return podFacts({ uid: `uid-${serial}`, name: `${prefix}-${serial}`, ...overrides });
}

/** Pod carrying the Istio marker annotation, with the given init container statuses. */
export const istioPod = (inits: readonly InitContainerFacts[], overrides: Partial<PodFacts> = {}): PodFacts =>
  podFacts({
    annotations: { "sidecar.istio.io/status": '{"initContainers":["istio-validation"]}' },
    initContainers: inits,
    ...overrides,
  });

/** Pod carrying the Linkerd marker label, with the given init container statuses. */
export const linkerdPod = (inits: readonly InitContainerFacts[], overrides: Partial<PodFacts> = {}): PodFacts =>
  podFacts({ labels: { "linkerd.io/control-plane-ns": "linkerd" }, initContainers: inits, ...overrides });
