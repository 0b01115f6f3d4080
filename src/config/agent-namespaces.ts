// --cni-agent-namespace: where each rule's CNI agent pods run. One namespace for every rule, or per rule
// (`istio=kube-system,linkerd=linkerd-cni`), so Istio's and Linkerd's agents need not share a namespace. A rule
// not named looks in the bare namespace given, else in every namespace.
import { fail, ok, type Parsed } from "./flag-kinds.js";
import { isDnsLabel } from "./names.js";

export type AgentNamespaces = {
  /** For every rule not named in `byRule`; undefined: all namespaces. */
  readonly all: string | undefined;
  /** Per rule name. */
  readonly byRule: Readonly<Record<string, string>>;
};

export const ALL_AGENT_NAMESPACES: AgentNamespaces = Object.freeze({ all: undefined, byRule: Object.freeze({}) });

export const agentNamespacesExpectation =
  "expected a namespace (every rule) or comma-separated <rule>=<namespace> entries (at most one bare namespace, for the rules not named), each a DNS label";

/** Parses the flag's text; "" is all namespaces for every rule. Rule names are checked against the rules later. */
export function parseAgentNamespaces(text: string): Parsed<AgentNamespaces> {
  if (text.trim() === "") return ok(ALL_AGENT_NAMESPACES);
  let all: string | undefined;
  const byRule: Record<string, string> = {};
  for (const part of text.split(",")) {
    const entry = part.trim();
    const [rule, namespace, extra] = entry.split("=");
    if (namespace === undefined) {
      if (!isDnsLabel(entry) || all !== undefined) return fail(agentNamespacesExpectation);
      all = entry;
      continue;
    }
    if (extra !== undefined || rule === undefined || !isDnsLabel(rule) || !isDnsLabel(namespace)) {
      return fail(`${agentNamespacesExpectation}; got ${JSON.stringify(entry)}`);
    }
    if (Object.hasOwn(byRule, rule)) return fail(`names the rule ${rule} twice`);
    byRule[rule] = namespace;
  }
  return ok(Object.freeze({ all, byRule: Object.freeze(byRule) }));
}

/** The namespace of a rule's CNI agent pods; undefined: all namespaces. */
export const agentNamespaceOf = (namespaces: AgentNamespaces, rule: string): string | undefined =>
  Object.hasOwn(namespaces.byRule, rule) ? namespaces.byRule[rule] : namespaces.all;
