// The edits made to a node's taint list, as pure functions: only the configured keys ever change; every other
// taint keeps its place and its fields.

import type { Taint } from "../informer/node-facts.js";
import { ADDED_EFFECT } from "./taint-policy.js";

export type TaintEdit =
  | { readonly kind: "remove"; readonly keys: readonly string[] }
  | { readonly kind: "add"; readonly key: string };

/** The new list, or undefined when the edit changes nothing (already removed, or already there). */
export function applyEdit(taints: readonly Taint[] | undefined, edit: TaintEdit): Taint[] | undefined {
  const current = taints ?? [];
  if (edit.kind === "remove") {
    const kept = current.filter((taint) => !edit.keys.includes(taint.key));
    return kept.length === current.length ? undefined : kept;
  }
  if (current.some((taint) => taint.key === edit.key)) return undefined;
  return [...current, { key: edit.key, effect: ADDED_EFFECT }];
}
