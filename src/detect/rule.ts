// What makes a pod broken under one mesh: a validator init container that rejected it, or (Istio ambient)
// a pod that should be captured by ztunnel but was never enrolled.

/** A label or annotation a pod must carry: the key, and optionally its exact value. */
export type Marker = { readonly key: string; readonly value?: string };

/** The sidecar-era meshes: an init container that fails with a known exit code when redirection is missing. */
export type ValidatorRule = {
  readonly kind?: "validator";
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
  /** The mesh's own startup taint, managed when --startup-taint-keys is empty; none: GENERIC_STARTUP_TAINT_KEY. */
  readonly startupTaintKey?: string;
};

/** Istio ambient: the CNI agent marks an enrolled pod with an annotation; a pod in scope without it bypasses the mesh. */
export type AmbientRule = {
  readonly kind: "ambient";
  readonly name: string;
  /** A pod carrying this label (key=value) is in scope. */
  readonly podSelector: Required<Marker>;
  /** A pod in a namespace carrying this label is in scope, unless it opts out. */
  readonly namespaceSelector: Required<Marker>;
  /** A pod carrying this label is out of scope even in an ambient namespace. */
  readonly optOut: Required<Marker>;
  readonly excludedNamespaces: readonly string[];
  /** Set by the node agent once redirection to ztunnel is in place; "enabled" means enrolled. */
  readonly redirectionAnnotation: string;
  /** A sidecar-injected pod is judged by the sidecar rules only. */
  readonly sidecarAnnotation: string;
  /** How long a running pod may stay unenrolled before it counts as broken. */
  readonly enrollGraceMs: number;
  /** What to do with a broken pod in delete mode: only report it (default), or delete it. */
  readonly action: "report" | "delete";
  readonly cniAgentSelector?: string;
  /** As ValidatorRule's. */
  readonly startupTaintKey?: string;
  /** The node's ztunnel must be Ready before a pod is deleted. */
  readonly ztunnelSelector: string;
  readonly ztunnelNamespace: string;
};

export type Rule = ValidatorRule | AmbientRule;

export const isAmbient = (rule: Rule): rule is AmbientRule => rule.kind === "ambient";
