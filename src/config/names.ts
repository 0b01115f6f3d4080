// Kubernetes naming rules (DNS labels and subdomains, qualified names, label values) as predicates.

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const nameChars = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** RFC 1123 label: container names, the custom rule name. */
export function isDnsLabel(text: string): boolean {
  return text.length <= 63 && dnsLabel.test(text);
}

/** RFC 1123 subdomain: node names, label key prefixes. */
export function isDnsSubdomain(text: string): boolean {
  return text.length <= 253 && text.split(".").every(isDnsLabel);
}

/** A label or annotation key: an optional DNS-subdomain prefix and "/", then a name of ≤63 chars. */
export function isQualifiedName(text: string): boolean {
  const slash = text.indexOf("/");
  const name = slash < 0 ? text : text.slice(slash + 1);
  if (slash >= 0 && !isDnsSubdomain(text.slice(0, slash))) return false;
  return name.length <= 63 && nameChars.test(name);
}

/** A label value: empty, or ≤63 chars of [A-Za-z0-9._-] with alphanumerics at both ends. */
export function isLabelValue(text: string): boolean {
  return text === "" || (text.length <= 63 && nameChars.test(text));
}

/** A hostname (RFC 1123, any case) for --http-address; IP literals are checked separately. */
export function isHostname(text: string): boolean {
  return isDnsSubdomain(text.toLowerCase());
}

export const qualifiedNameExpectation =
  "expected a qualified name: optional DNS-subdomain prefix and '/', then ≤63 chars of [A-Za-z0-9._-] starting and ending alphanumeric";
export const labelValueExpectation =
  "expected a label value: ≤63 chars of [A-Za-z0-9._-] starting and ending alphanumeric";
