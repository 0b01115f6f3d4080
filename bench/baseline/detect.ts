// The baseline's check for a pod Istio's validator rejected, on the whole V1Pod (same rule as cni-repair's istio preset).
import type { V1Pod } from "@kubernetes/client-node";

const VALIDATOR = "istio-validation";
const EXIT_CODE = 126;

export function isBroken(pod: V1Pod): boolean {
  if (pod.metadata?.deletionTimestamp) return false;
  if (pod.metadata?.annotations?.["sidecar.istio.io/status"] === undefined) return false;
  if (pod.status?.phase === "Failed" || pod.status?.phase === "Succeeded") return false;
  const validator = pod.status?.initContainerStatuses?.find((status) => status.name === VALIDATOR);
  if (!validator) return false;
  if (validator.state?.terminated?.exitCode === 0) return false;
  return validator.state?.terminated?.exitCode === EXIT_CODE || validator.lastState?.terminated?.exitCode === EXIT_CODE;
}
