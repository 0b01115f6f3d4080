// What the admission policies let the controller's ServiceAccount do, asked with its own token, and what the
// audit log recorded of it.
import { CoreV1Api, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { outcomeOf } from "./api-errors.js";
import { type AuditEvent, podRequests } from "./audit-log.js";
import type { ControlPlane } from "./control-plane.js";
import { INSTALL } from "./overlays.js";
import { waitFor } from "./wait.js";

const USER = `system:serviceaccount:${INSTALL.namespace}:${INSTALL.serviceAccount}`;

/** The start of the API server's message when a policy (bound by a binding of its name) refuses a request. */
export const deniedBy = (policy: string) =>
  `ValidatingAdmissionPolicy '${policy}' with binding '${policy}' denied request`;

/** A status patch (a label, as label mode writes it) and a delete of one pod, with this token. */
export function podActions(plane: ControlPlane, token: string, namespace: string) {
  const api = plane.kubeConfig(token, "cni-repair").makeApiClient(CoreV1Api);
  return {
    label: (name: string) =>
      outcomeOf(
        api.patchNamespacedPodStatus(
          { namespace, name, body: { metadata: { labels: { "cni.istio.io/uninitialized": "true" } } } },
          setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
        ),
      ),
    remove: (name: string, dryRun = false) =>
      outcomeOf(api.deleteNamespacedPod({ namespace, name, ...(dryRun && { dryRun: "All" }) })),
  };
}

/** The ServiceAccount's completed writes on pods of the namespace, dry runs left out, as "verb[/status] name code". */
export function auditedActions(plane: ControlPlane, namespace: string): { line: string; event: AuditEvent }[] {
  return podRequests(plane.auditLogPath, namespace)
    .filter((event) => event.user?.username === USER && event.verb !== "get" && !event.requestURI.includes("dryRun"))
    .map((event) => ({
      line: `${event.verb}${event.objectRef?.subresource ? `/${event.objectRef.subresource}` : ""} ${event.objectRef?.name} ${event.responseStatus?.code}`,
      event,
    }));
}

/**
 * The API server loads new policies through an informer: until a dry-run delete of a pod the policy must refuse is
 * refused, it may not enforce them yet. A dry run changes nothing either way.
 */
export async function policyInForce(probe: () => Promise<{ code: number }>): Promise<void> {
  await answersInForce({ probe: 403 }, probe);
}

/**
 * Dry-run deletes until each named pod gets its code. After a reinstall under the same name the API server's policy
 * informer may enforce the previous install's policy for a while (one probe refused by either proves nothing).
 */
export async function answersInForce(
  expected: Readonly<Record<string, number>>,
  dryRunDelete: (name: string) => Promise<{ code: number }>,
): Promise<void> {
  const answered = async () => {
    for (const [name, code] of Object.entries(expected)) if ((await dryRunDelete(name)).code !== code) return false;
    return true;
  };
  await waitFor(`dry-run deletes answered ${JSON.stringify(expected)}`, answered, {
    timeoutMs: 20_000,
    intervalMs: 250,
  });
}
