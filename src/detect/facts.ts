// The compact facts kept per pod: only what detection, the safety policy and the actions read.
// The cache never holds a V1Pod; these are made at the edge by toPodFacts.

/** How a container run ended, as the kubelet reported it. */
export type Termination = {
  readonly exitCode: number;
  readonly reason: string | undefined;
  /** Kept only when some rule matches on the message (it can be long). */
  readonly message: string | undefined;
  /**
   * When the run started (terminated.startedAt, the kubelet's clock), epoch ms; undefined when missing or unreadable.
   * Istio's fallback asks whether the failed run began after Istio's repair had its chance.
   */
  readonly startedAtMs: number | undefined;
  /** When the run ended (terminated.finishedAt, the kubelet's clock), epoch ms; undefined when missing or unreadable. */
  readonly finishedAtMs: number | undefined;
};

/** The current state of an init container: terminated (with details) or not. */
export type ContainerState = Termination | "running" | "waiting" | "unknown";

export type InitContainerFacts = {
  readonly name: string;
  readonly state: ContainerState;
  /** The previous run, set while the kubelet restarts the container. */
  readonly lastTermination: Termination | undefined;
  /**
   * The kubelet's restartCount: the attempt number of the newest run (0 for the first). With `lastTermination`
   * it tells a repeated failure from a first one.
   */
  readonly restartCount: number;
};

export type OwnerRef = { readonly kind: string; readonly name: string; readonly uid: string };

export type PodFacts = {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly nodeName: string | undefined;
  readonly phase: string | undefined;
  readonly restartPolicy: string | undefined;
  /** spec.hostNetwork: such a pod shares the node's network and cannot be captured by a mesh. */
  readonly hostNetwork: boolean;
  /**
   * A mirror pod of a static pod (annotation kubernetes.io/config.mirror, or a controlling owner of kind Node):
   * the kubelet runs it from a file, so deleting the API object repairs nothing.
   */
  readonly staticPod: boolean;
  /**
   * When the pod's current sandbox (its network namespace) was set up, epoch ms: the kubelet's
   * PodReadyToStartContainers condition, or without it the earliest start of any of its containers; undefined
   * while it has none. Kept only when a rule needs it: the CNI agent enrols an ambient pod at sandbox setup, so the
   * enrolment grace counts from there, whether or not its app keeps running.
   */
  readonly sandboxSinceMs: number | undefined;
  /** deletionTimestamp is set: the pod is already going away. */
  readonly deleting: boolean;
  /** metadata.creationTimestamp in epoch ms; tells a replacement from a sibling. Fixed for a UID. */
  readonly createdAtMs: number | undefined;
  /** The controlling ownerReference; undefined for a bare pod nothing would recreate. */
  readonly owner: OwnerRef | undefined;
  /** Only the label keys some rule or action needs. */
  readonly labels: Readonly<Record<string, string>>;
  /** Only the annotation keys some rule needs. */
  readonly annotations: Readonly<Record<string, string>>;
  /** Only the init containers some rule names. */
  readonly initContainers: readonly InitContainerFacts[];
};

export const podKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/** Phase Failed or Succeeded: the pod has finished and will not run again. */
export const isFinished = (facts: PodFacts): boolean => facts.phase === "Failed" || facts.phase === "Succeeded";
