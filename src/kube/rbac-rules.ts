// Whether a list of RBAC resource rules (as a SelfSubjectRulesReview returns them) grants one permission. The
// matching is RBAC's own, as the Kubernetes authorizer applies it (rbac/v1 `VerbMatches`, `APIGroupMatches`,
// `ResourceMatches`, `ResourceNameMatches`): "*" matches any verb, group or resource; "*/<sub>" any resource's
// subresource <sub>; resourceNames, when present, only requests naming one of them (so never a list or a watch of
// the whole collection).
/** One RBAC permission; no namespace means cluster-wide (every namespace). */
export type Permission = {
  readonly verb: string;
  /** API group, "" for the core group. */
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  /** One object by name (RBAC resourceNames), e.g. the one Lease we elect with. */
  readonly name?: string;
};

/** One `status.resourceRules` entry of a SelfSubjectRulesReview. */
export type ResourceRule = {
  readonly verbs: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
};

export function rulesGrant(rules: readonly ResourceRule[], permission: Permission): boolean {
  return rules.some((rule) => ruleGrants(rule, permission));
}

function ruleGrants(rule: ResourceRule, permission: Permission): boolean {
  return (
    matches(rule.verbs, permission.verb) &&
    matches(rule.apiGroups ?? [], permission.group) &&
    (rule.resources ?? []).some((resource) => resourceMatches(resource, permission)) &&
    nameMatches(rule.resourceNames ?? [], permission.name)
  );
}

const matches = (allowed: readonly string[], wanted: string): boolean =>
  allowed.includes("*") || allowed.includes(wanted);

function resourceMatches(ruleResource: string, permission: Permission): boolean {
  if (ruleResource === "*") return true;
  const { resource, subresource } = permission;
  if (subresource === undefined) return ruleResource === resource;
  return ruleResource === `${resource}/${subresource}` || ruleResource === `*/${subresource}`;
}

function nameMatches(names: readonly string[], name: string | undefined): boolean {
  return names.length === 0 || (name !== undefined && names.includes(name));
}
