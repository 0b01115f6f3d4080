// Syntax checks for label and field selectors, so a typo fails at startup instead of as a 400 from every list.

import { isLabelValue, isQualifiedName } from "./names.js";

/** Splits on commas outside parentheses: "a in (x,y),b" → ["a in (x,y)", "b"]. */
function splitOutsideParens(text: string): string[] | undefined {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "," && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
    if (depth < 0 || depth > 1) return undefined;
  }
  if (depth !== 0) return undefined;
  parts.push(text.slice(start));
  return parts;
}

const setRequirement = /^(\S+)\s+(in|notin)\s*\((.*)\)$/;
const equalityRequirement = /^([^=!\s]+)\s*(==|!=|=)\s*(.*)$/;

function labelRequirementProblem(requirement: string): string | undefined {
  const set = setRequirement.exec(requirement);
  if (set !== null) {
    const [, key = "", , list = ""] = set;
    if (!isQualifiedName(key)) return `label key "${key}" is not a qualified name`;
    const values = list.split(",").map((v) => v.trim());
    const bad = values.find((v) => v === "" || !isLabelValue(v));
    return bad === undefined ? undefined : `"${bad}" in "${requirement}" is not a label value`;
  }
  const equality = equalityRequirement.exec(requirement);
  if (equality !== null) {
    const [, key = "", , value = ""] = equality;
    if (!isQualifiedName(key)) return `label key "${key}" is not a qualified name`;
    return isLabelValue(value) ? undefined : `"${value}" in "${requirement}" is not a label value`;
  }
  const key = requirement.startsWith("!") ? requirement.slice(1).trim() : requirement;
  return isQualifiedName(key) ? undefined : `"${requirement}" is not a requirement (k, !k, k=v, k!=v, k in (a,b))`;
}

/** Why a label selector is malformed, or undefined if it is fine ("" selects everything). */
export function labelSelectorProblem(selector: string): string | undefined {
  if (selector.trim() === "") return undefined;
  const requirements = splitOutsideParens(selector);
  if (requirements === undefined) return "unbalanced parentheses";
  for (const raw of requirements) {
    const requirement = raw.trim();
    if (requirement === "") return "empty requirement";
    const problem = labelRequirementProblem(requirement);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

const fieldPath = /^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)*$/;

/** Splits on commas not escaped by a backslash (the API server's escaping: \\ \, \=). */
export function splitUnescaped(text: string): string[] {
  const parts: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === ",") {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

function fieldTermProblem(term: string): string | undefined {
  const op = /!=|==|=/.exec(term);
  if (op === null) return `"${term}" has no operator (=, ==, !=)`;
  const path = term.slice(0, op.index).trim();
  if (!fieldPath.test(path)) return `"${path}" is not a field path like spec.nodeName`;
  const value = term.slice(op.index + op[0].length);
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === "\\") {
      const escaped = value[++i];
      if (escaped !== "\\" && escaped !== "," && escaped !== "=") return `bad escape in "${term}"`;
    } else if (c === "=") return `unescaped "=" in the value of "${term}"`;
  }
  return undefined;
}

/** Why a field selector is malformed, or undefined if it is fine ("" selects everything). */
export function fieldSelectorProblem(selector: string): string | undefined {
  if (selector.trim() === "") return undefined;
  for (const term of splitUnescaped(selector)) {
    if (term.trim() === "") return "empty requirement";
    const problem = fieldTermProblem(term);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** A field-selector value with the characters the API server treats as syntax escaped. */
export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/**
 * What a list or watch covers, kept apart until the request is made: a namespace is a path segment, not a
 * selector term (see kube/collection-path.ts), and values are escaped here, the one place selectors are written.
 */
export type Scope = {
  /** One namespace: the namespaced collection. Absent: every namespace. */
  readonly namespace?: string;
  /** As the user wrote it; absent: no label condition. */
  readonly labelSelector?: string;
  /** Complete and escaped; absent: no field condition. */
  readonly fieldSelector?: string;
};

/** One condition on a field, its value unescaped: `[path, operator, value]`. */
export type FieldTerm = readonly [path: string, operator: "=" | "!=", value: string];

/** Joins selectors already written (a user's --field-selector) with terms whose values it escapes. */
export function fieldSelector(written: readonly string[], terms: readonly FieldTerm[]): string | undefined {
  const parts = [
    ...written.filter((part) => part.trim() !== ""),
    ...terms.map(([path, operator, value]) => `${path}${operator}${escapeFieldValue(value)}`),
  ];
  return parts.length === 0 ? undefined : parts.join(",");
}

/** A scope with only the parts that say something (no empty selectors). */
export function scopeOf(parts: {
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
}): Scope {
  return {
    ...(parts.namespace && { namespace: parts.namespace }),
    ...(parts.labelSelector?.trim() && { labelSelector: parts.labelSelector }),
    ...(parts.fieldSelector?.trim() && { fieldSelector: parts.fieldSelector }),
  };
}

/** The field selector the scope amounts to, the namespace written as a term: for people (scan's scope line). */
export function describeFieldSelector(scope: Scope): string {
  const namespace: FieldTerm[] = scope.namespace === undefined ? [] : [["metadata.namespace", "=", scope.namespace]];
  return fieldSelector(scope.fieldSelector === undefined ? [] : [scope.fieldSelector], namespace) ?? "";
}

const PINNED_NAMESPACE = /^\s*metadata\.namespace\s*==?\s*([a-z0-9]([-a-z0-9]*[a-z0-9])?)\s*$/;

/**
 * A user's --field-selector that pins one namespace (`metadata.namespace=X`), split into that namespace and the
 * rest, so the namespaced collection is listed (see kube/collection-path.ts). Anything else stays as written:
 * two different namespaces select nothing, and the server says so.
 */
export function liftNamespace(selector: string): { namespace?: string; rest: string } {
  const terms = splitUnescaped(selector);
  const pinned = new Set(terms.flatMap((term) => PINNED_NAMESPACE.exec(term)?.[1] ?? []));
  const [namespace] = pinned;
  if (pinned.size !== 1 || namespace === undefined) return { rest: selector };
  return { namespace, rest: terms.filter((term) => !PINNED_NAMESPACE.test(term)).join(",") };
}
