// What makes a pod broken under one mesh: its validator init container and how it fails.

/** A label or annotation a pod must carry: the key, and optionally its exact value. */
export type Marker = { readonly key: string; readonly value?: string };

export type Rule = {
  /** Stable name, used as the `rule` metric label: "istio", "linkerd", or the custom rule's name. */
  readonly name: string;
  readonly initContainer: string;
  /** Exit codes meaning "traffic redirection is missing"; each in 1..255. */
  readonly exitCodes: readonly number[];
  /** When set, the termination message must contain this text. */
  readonly messageContains?: string;
  readonly requiredAnnotation?: Marker;
  readonly requiredLabel?: Marker;
  /**
   * Label selector of the mesh's CNI node agent pods. Deleting a broken pod while the agent on its node is not
   * Ready only produces another broken pod, so the readiness gate waits for it.
   */
  readonly cniAgentSelector?: string;
};
