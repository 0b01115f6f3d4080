// Namespaces as the ambient rule sees them: the name and the few labels that decide ambient scope.
import { FactsStore } from "./facts-store.js";

export type NamespaceFacts = { readonly name: string; readonly labels: Readonly<Record<string, string>> };

const sameNamespace = (a: NamespaceFacts, b: NamespaceFacts): boolean => {
  const keys = Object.keys(a.labels);
  return keys.length === Object.keys(b.labels).length && keys.every((key) => a.labels[key] === b.labels[key]);
};

export const namespaceStore = (): FactsStore<NamespaceFacts> => new FactsStore((ns) => ns.name, sameNamespace);

/** Raw Namespace JSON to facts keeping only `labelKeys`; never throws. */
export function toNamespaceFacts(raw: unknown, labelKeys: readonly string[]): NamespaceFacts | undefined {
  const metadata = (raw as { metadata?: { name?: unknown; labels?: unknown } } | null)?.metadata;
  if (typeof metadata?.name !== "string" || metadata.name === "") return undefined;
  const source =
    typeof metadata.labels === "object" && metadata.labels !== null ? (metadata.labels as Record<string, unknown>) : {};
  const labels: Record<string, string> = {};
  for (const key of labelKeys) {
    const value = Object.hasOwn(source, key) ? source[key] : undefined;
    if (typeof value === "string") labels[key] = value;
  }
  return { name: metadata.name, labels };
}
