// What the API server's authorizer lets an identity do: SubjectAccessReview (asked as admin) for one action, and
// SelfSubjectRulesReview (asked with the identity's own token) for everything it may do in a namespace.
import {
  ApiException,
  AuthorizationV1Api,
  CoreV1Api,
  type V1PolicyRule,
  type V1ResourceAttributes,
} from "@kubernetes/client-node";
import type { ControlPlane } from "./control-plane.js";
import { serviceAccountToken } from "./service-account-files.js";

export type Identity = { readonly user: string; readonly groups: readonly string[] };

/** A ServiceAccount as the authorizer sees its tokens: the user and the groups every SA is in. */
export function serviceAccountIdentity(namespace: string, name: string): Identity {
  return {
    user: `system:serviceaccount:${namespace}:${name}`,
    groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"],
  };
}

/** Resource rules as one "verb group/resource [name]" string per permission ("core" for the core group). */
export function permissionsOf(rules: readonly V1PolicyRule[]): string[] {
  const permissions = new Set<string>();
  for (const rule of rules) {
    for (const verb of rule.verbs) {
      for (const group of rule.apiGroups ?? [""]) {
        for (const resource of rule.resources ?? []) {
          const names = rule.resourceNames?.length ? rule.resourceNames : [""];
          for (const name of names) permissions.add(`${verb} ${group || "core"}/${resource}${name && ` ${name}`}`);
        }
      }
    }
  }
  return [...permissions].sort();
}

/** SubjectAccessReview: may `who` do this? (namespace "" or absent: cluster-wide, i.e. in every namespace.) */
export async function isAllowed(
  plane: ControlPlane,
  who: Identity,
  attributes: V1ResourceAttributes,
): Promise<boolean> {
  const review = await plane
    .kubeConfig()
    .makeApiClient(AuthorizationV1Api)
    .createSubjectAccessReview({
      body: {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: { user: who.user, groups: [...who.groups], resourceAttributes: attributes },
      },
    });
  return review.status?.allowed === true;
}

/**
 * Every permission the token's owner has in the namespace (cluster-wide grants included), one string each,
 * sorted: "verb group/resource[/subresource] [name]" ("core" for the core group) or "verb <non-resource URL>".
 */
export async function effectivePermissions(plane: ControlPlane, token: string, namespace: string): Promise<string[]> {
  const review = await plane
    .kubeConfig(token, "reviewer")
    .makeApiClient(AuthorizationV1Api)
    .createSelfSubjectRulesReview({
      body: { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectRulesReview", spec: { namespace } },
    });
  if (review.status?.incomplete) throw new Error(`incomplete rules review: ${review.status.evaluationError}`);
  const permissions = new Set(permissionsOf(review.status?.resourceRules ?? []));
  for (const rule of review.status?.nonResourceRules ?? []) {
    for (const verb of rule.verbs) for (const url of rule.nonResourceURLs ?? []) permissions.add(`${verb} ${url}`);
  }
  return [...permissions].sort();
}

const BASELINE_ACCOUNT = { namespace: "default", name: "cni-repair-test-nobody" };

/**
 * What every authenticated identity may do anyway (system:basic-user, system:discovery, …): the permissions of a
 * ServiceAccount bound to nothing.
 */
export async function baselinePermissions(plane: ControlPlane, namespace: string): Promise<string[]> {
  const core = plane.kubeConfig().makeApiClient(CoreV1Api);
  try {
    await core.createNamespacedServiceAccount({
      namespace: BASELINE_ACCOUNT.namespace,
      body: { metadata: { name: BASELINE_ACCOUNT.name } },
    });
  } catch (error) {
    if (!(error instanceof ApiException && error.code === 409)) throw error;
  }
  const token = await serviceAccountToken(plane, BASELINE_ACCOUNT.namespace, BASELINE_ACCOUNT.name);
  return await effectivePermissions(plane, token, namespace);
}

/** Permissions the token has beyond the baseline every authenticated identity has. */
export async function grantedPermissions(plane: ControlPlane, token: string, namespace: string): Promise<string[]> {
  const baseline = new Set(await baselinePermissions(plane, namespace));
  return (await effectivePermissions(plane, token, namespace)).filter((permission) => !baseline.has(permission));
}
