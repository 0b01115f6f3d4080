// The permission self-check: what the configured mode needs, what the API server denies, and the RBAC to fix it.
import { type Permission, type ResourceRule, rulesGrant } from "./rbac-rules.js";
import type { KubeTransport } from "./transport.js";

export type { Permission };

export type RequiredPermissionsOptions = {
  readonly mode: "delete" | "label" | "report";
  readonly deleteBarePods: boolean;
  readonly electing: boolean;
  readonly leaseNamespace: string;
  /** The Lease's name: get and update are needed on that one only (create cannot be limited by name). */
  readonly leaseName?: string;
  /** When the controller watches one namespace only; cluster-wide otherwise. */
  readonly watchNamespace?: string;
  /** The ambient rule watches namespaces for their labels. */
  readonly watchNamespaces?: boolean;
  /** Startup-taint management: nodes watched, and patched unless only reported. */
  readonly startupTaints?: "write" | "report";
};

/** Every permission the configured controller uses. */
export function requiredPermissions(opts: RequiredPermissionsOptions): Permission[] {
  const scope = opts.watchNamespace === undefined ? {} : { namespace: opts.watchNamespace };
  const pods = (verb: string, subresource?: string): Permission => ({
    verb,
    group: "",
    resource: "pods",
    ...(subresource !== undefined && { subresource }),
    ...scope,
  });
  const needed = [pods("get"), pods("list"), pods("watch")];
  // Report mode issues server-side dry-run deletes, which are authorised as deletes.
  if (opts.mode === "delete" || opts.mode === "report") needed.push(pods("delete"));
  // Bare pods are labelled instead of deleted unless --delete-bare-pods.
  if (opts.mode === "label" || (opts.mode === "delete" && !opts.deleteBarePods)) needed.push(pods("patch", "status"));
  needed.push({ verb: "create", group: "events.k8s.io", resource: "events", ...scope });
  if (opts.watchNamespaces) {
    for (const verb of ["list", "watch"]) needed.push({ verb, group: "", resource: "namespaces" });
  }
  if (opts.startupTaints) {
    const verbs = opts.startupTaints === "write" ? ["get", "list", "watch", "patch"] : ["list", "watch"];
    for (const verb of verbs) needed.push({ verb, group: "", resource: "nodes" });
    // Node Events go to "default" (the namespace of cluster-scoped objects' Events).
    if (opts.startupTaints === "write" && opts.watchNamespace !== undefined) {
      needed.push({ verb: "create", group: "events.k8s.io", resource: "events", namespace: "default" });
    }
  }
  if (opts.electing) {
    for (const verb of ["get", "create", "update"]) {
      const name = verb === "create" ? undefined : opts.leaseName;
      needed.push({
        verb,
        group: "coordination.k8s.io",
        resource: "leases",
        namespace: opts.leaseNamespace,
        ...(name !== undefined && { name }),
      });
    }
  }
  return needed;
}

/**
 * What reading Istio's repair settings needs: its two objects, by name, in the istio rule's pinned agent namespace,
 * else in every namespace (a ClusterRole limited by resourceNames: the agent may run anywhere). Optional: when
 * refused, the controller holds istio pods as if Istio repaired them in place (the safe side), it does not stop.
 */
export function istioRepairPermissions(namespace: string | undefined): Permission[] {
  const where = namespace === undefined ? {} : { namespace };
  return ["get", "list", "watch"].flatMap((verb) => [
    { verb, group: "", resource: "configmaps", ...where, name: "istio-cni-config" },
    { verb, group: "apps", resource: "daemonsets", ...where, name: "istio-cni-node" },
  ]);
}

/**
 * The permissions the API server denies us. First one SelfSubjectRulesReview per namespace asked about (the rules
 * granted there); a permission those rules grant is held, every other one is asked with a SelfSubjectAccessReview,
 * which alone decides that one is missing. So a refusal always rests on the authorizer's own answer, and a process
 * whose grants are all in RBAC asks one request per namespace instead of one per permission: at a fleet's rollout,
 * a dozen requests fewer per instance for the one API server (bench/README.md, "Fleet rollout").
 */
export async function missingPermissions(
  transport: Pick<KubeTransport, "request">,
  permissions: readonly Permission[],
): Promise<Permission[]> {
  const scopes = [...new Set(permissions.map((p) => p.namespace))];
  const rulesByScope = new Map(
    await Promise.all(scopes.map(async (namespace) => [namespace, await grantedRules(transport, namespace)] as const)),
  );
  const unproven = permissions.filter((p) => !rulesGrant(rulesByScope.get(p.namespace) ?? [], p));
  return deniedByAccessReviews(transport, unproven);
}

/** The permissions the API server denies us, asked all at once with one SelfSubjectAccessReview each. */
export async function deniedByAccessReviews(
  transport: Pick<KubeTransport, "request">,
  permissions: readonly Permission[],
): Promise<Permission[]> {
  const allowed = await Promise.all(permissions.map((permission) => isAllowed(transport, permission)));
  return permissions.filter((_, index) => !allowed[index]);
}

/**
 * A namespace name no namespace can have (a colon is not allowed in one), so no RoleBinding can be in it: the
 * rules RBAC reports there are those of ClusterRoleBindings, the grants that hold in every namespace.
 */
const NO_NAMESPACE = "cni-repair:every-namespace";

/**
 * The resource rules the authorizer reports for us in a namespace (undefined: in every namespace). Rules are
 * additive, so each one listed is granted even when the list is incomplete (another authorizer, e.g. a webhook, may
 * grant more: those are asked one by one). None when the review cannot be had.
 */
async function grantedRules(
  transport: Pick<KubeTransport, "request">,
  namespace: string | undefined,
): Promise<readonly ResourceRule[]> {
  try {
    const { body } = await transport.request(
      "create",
      "POST",
      "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
      {
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SelfSubjectRulesReview",
          spec: { namespace: namespace ?? NO_NAMESPACE },
        },
        timeoutMs: 10_000,
      },
    );
    const rules = (body as { status?: { resourceRules?: unknown } } | undefined)?.status?.resourceRules;
    return Array.isArray(rules) ? rules.filter(isResourceRule) : [];
  } catch {
    return [];
  }
}

function isResourceRule(value: unknown): value is ResourceRule {
  const rule = value as Partial<Record<keyof ResourceRule, unknown>> | null;
  const strings = (field: unknown) =>
    field === undefined || (Array.isArray(field) && field.every((x) => typeof x === "string"));
  return (
    typeof rule === "object" &&
    rule !== null &&
    Array.isArray(rule.verbs) &&
    strings(rule.verbs) &&
    strings(rule.apiGroups) &&
    strings(rule.resources) &&
    strings(rule.resourceNames)
  );
}

async function isAllowed(transport: Pick<KubeTransport, "request">, permission: Permission): Promise<boolean> {
  const { verb, group, resource, subresource, namespace, name } = permission;
  const { body } = await transport.request("create", "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
    body: {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: {
        resourceAttributes: {
          verb,
          group,
          resource,
          ...(subresource !== undefined && { subresource }),
          ...(namespace !== undefined && { namespace }),
          ...(name !== undefined && { name }),
        },
      },
    },
    timeoutMs: 10_000,
  });
  return (body as { status?: { allowed?: unknown } } | undefined)?.status?.allowed === true;
}

/**
 * What is missing and the RBAC rules that would grant it: cluster-wide permissions in a ClusterRole,
 * namespaced ones in a Role in that namespace. Empty when nothing is missing.
 */
export function describeMissing(missing: readonly Permission[]): string {
  if (missing.length === 0) return "";
  const lines = [`missing ${missing.length} permission(s):`, ...missing.map((p) => `  - ${describePermission(p)}`)];
  // Cluster-wide first, then namespaces in order (sort() alone would put undefined last).
  const namespaces = [...new Set(missing.flatMap((p) => (p.namespace === undefined ? [] : [p.namespace])))].sort();
  const scopes = [...(missing.some((p) => p.namespace === undefined) ? [undefined] : []), ...namespaces];
  for (const namespace of scopes) {
    lines.push(
      namespace === undefined
        ? "rules to add to a ClusterRole (bound with a ClusterRoleBinding):"
        : `rules to add to a Role in namespace ${namespace} (bound with a RoleBinding there):`,
      ...rulesYaml(missing.filter((p) => p.namespace === namespace)),
    );
  }
  return lines.join("\n");
}

/** `delete pods (cluster-wide)`, `patch pods/status in namespace x`. */
export function describePermission(permission: Permission): string {
  const where = permission.namespace === undefined ? "(cluster-wide)" : `in namespace ${permission.namespace}`;
  return `${permission.verb} ${resourceName(permission)} ${where}`;
}

function resourceName(permission: Permission): string {
  return permission.subresource ? `${permission.resource}/${permission.subresource}` : permission.resource;
}

/** One rule per API group, verb set and object name, resources sharing all three merged, as PolicyRule YAML. */
function rulesYaml(permissions: readonly Permission[]): string[] {
  const verbsByResource = new Map<string, { group: string; resource: string; name?: string; verbs: Set<string> }>();
  for (const p of permissions) {
    const key = JSON.stringify([p.group, resourceName(p), p.name ?? ""]);
    const entry = verbsByResource.get(key) ?? {
      group: p.group,
      resource: resourceName(p),
      ...(p.name !== undefined && { name: p.name }),
      verbs: new Set<string>(),
    };
    entry.verbs.add(p.verb);
    verbsByResource.set(key, entry);
  }
  const rules = new Map<string, { group: string; resources: string[]; name?: string; verbs: string[] }>();
  for (const { group, resource, name, verbs } of verbsByResource.values()) {
    const sortedVerbs = [...verbs].sort();
    const key = JSON.stringify([group, sortedVerbs, name ?? ""]);
    const rule = rules.get(key) ?? { group, resources: [], ...(name !== undefined && { name }), verbs: sortedVerbs };
    rule.resources.push(resource);
    rules.set(key, rule);
  }
  const list = (items: readonly string[]) => `[${items.map((item) => JSON.stringify(item)).join(", ")}]`;
  return [...rules.values()].flatMap((rule) => [
    `- apiGroups: ${list([rule.group])}`,
    `  resources: ${list(rule.resources)}`,
    ...(rule.name === undefined ? [] : [`  resourceNames: ${list([rule.name])}`]),
    `  verbs: ${list(rule.verbs)}`,
  ]);
}
