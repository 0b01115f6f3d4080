// Why a broken pod is held back: the label values of cni_repair_pods_held and cni_repair_holds_total.

export const HOLD_REASONS = [
  "rate_limit",
  "node_inflight",
  "namespace_inflight",
  "cni_agent_not_ready",
  "ztunnel_not_ready",
  "loop_backoff",
  "storm",
  "bare_pod",
  "static_pod",
  "terminal",
  // Istio's own repair (its istio-cni-config): it repairs this pod in place, or deletes/labels broken pods itself.
  "mesh_repair_pending",
  "mesh_repair_active",
  // The API server answered a write for this pod with 429/503 and Retry-After: no call for it before then.
  "throttled",
] as const;
export type HoldReason = (typeof HOLD_REASONS)[number];
