// Reads this identity's ValidatingAdmissionPolicies and their bindings, to tell whether the API server enforces them.
import { messageOf } from "../util/message-of.js";
import { ApiError } from "./api-error.js";
import type { KubeTransport } from "./transport.js";
import { NODE_NAME_EXTRA } from "./whoami.js";

const API = "/apis/admissionregistration.k8s.io/v1";

/** What the API server holds of one policy and its binding (the binding has the policy's name). */
export type PolicyState =
  | {
      readonly name: string;
      readonly state: "enforced";
      /** It reads the node a pod-bound token names (the per-node policy): such a token is needed to pass it. */
      readonly judgesTokenNode: boolean;
    }
  /** The policy, its binding or both are not there: nothing enforces it. */
  | { readonly name: string; readonly state: "missing"; readonly missing: readonly ("policy" | "binding")[] }
  /** The binding exists but does not deny with this policy (another policy, or only Warn / Audit). */
  | { readonly name: string; readonly state: "not-enforced"; readonly detail: string }
  /** Could not be read: 403 without the chart's RBAC, or the server did not answer. */
  | { readonly name: string; readonly state: "unknown"; readonly detail: string };

type Binding = { spec?: { policyName?: unknown; validationActions?: unknown } };

/** One GET each for the policy and its binding; never throws. */
export async function admissionPolicyState(
  transport: Pick<KubeTransport, "request">,
  name: string,
): Promise<PolicyState> {
  const read = async (kind: string) => {
    try {
      const { body } = await transport.request("get", "GET", `${API}/${kind}/${encodeURIComponent(name)}`, {
        timeoutMs: 10_000,
      });
      return { found: true as const, body };
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return { found: false as const };
      throw error;
    }
  };
  try {
    const [policy, binding] = await Promise.all([
      read("validatingadmissionpolicies"),
      read("validatingadmissionpolicybindings"),
    ]);
    const missing = [...(policy.found ? [] : ["policy" as const]), ...(binding.found ? [] : ["binding" as const])];
    if (missing.length > 0) return { name, state: "missing", missing };
    const spec = (binding.body as Binding | undefined)?.spec;
    if (spec?.policyName !== name)
      return { name, state: "not-enforced", detail: `its binding names policy ${JSON.stringify(spec?.policyName)}` };
    const actions = Array.isArray(spec.validationActions) ? spec.validationActions : [];
    if (!actions.includes("Deny"))
      return { name, state: "not-enforced", detail: `its binding's validationActions are [${actions.join(", ")}]` };
    return { name, state: "enforced", judgesTokenNode: JSON.stringify(policy.body).includes(NODE_NAME_EXTRA) };
  } catch (error) {
    const detail =
      error instanceof ApiError && error.status === 403
        ? "forbidden: this identity may not get validatingadmissionpolicies and validatingadmissionpolicybindings by these names (the Helm chart grants it)"
        : messageOf(error);
    return { name, state: "unknown", detail };
  }
}
