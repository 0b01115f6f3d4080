// The only code that writes a node's taints: one JSON patch that first `test`s the resourceVersion the node was
// judged on, then the taint list as it was read, then sets the new list. If anything changed the node since
// (a concurrent taint edit, another replica's add and remove that left the taints as they were), the API server
// refuses the patch (422) and nothing is written; the node is judged again on what the watch delivers. So a
// concurrent change is never lost, no write acts on a judgement of an older node, and nothing but spec.taints is
// ever sent.
import type { NodeFacts, Taint } from "../informer/node-facts.js";
import { ApiError } from "../kube/api-error.js";
import { METADATA_ONLY } from "../kube/metadata-only.js";
import type { KubeTransport } from "../kube/transport.js";
import { applyEdit, type TaintEdit } from "./taint-edit.js";

export type PatchOutcome =
  /** Written. */
  | { readonly kind: "patched" }
  /** Nothing to write: the edit was already true of the node as judged. */
  | { readonly kind: "unchanged" }
  /** Refused: the node changed since the version judged (422 from a `test`, or 409). */
  | { readonly kind: "stale"; readonly status: number }
  /** The node is gone. */
  | { readonly kind: "gone" };

const nodePath = (name: string) => `/api/v1/nodes/${encodeURIComponent(name)}`;

/** The ops: test the version and the list judged (null when absent), then set the new list (or drop it when empty). */
export function taintPatch(judged: Pick<NodeFacts, "resourceVersion" | "taints">, next: readonly Taint[]): unknown[] {
  const tests = [
    { op: "test", path: "/metadata/resourceVersion", value: judged.resourceVersion },
    { op: "test", path: "/spec/taints", value: judged.taints ?? null },
  ];
  if (next.length === 0) return [...tests, { op: "remove", path: "/spec/taints" }];
  return [...tests, { op: "add", path: "/spec/taints", value: next }];
}

/** Applies the edit to the node as judged, once. Throws ApiError for anything but a refused test or a gone node. */
export async function patchTaints(transport: KubeTransport, judged: NodeFacts, edit: TaintEdit): Promise<PatchOutcome> {
  const next = applyEdit(judged.taints, edit);
  if (next === undefined) return { kind: "unchanged" };
  try {
    await transport.requestBytes("patch", "PATCH", nodePath(judged.name), {
      accept: METADATA_ONLY,
      body: taintPatch(judged, next),
      contentType: "application/json-patch+json",
    });
    return { kind: "patched" };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (error.status === 404) return { kind: "gone" };
    if (error.status === 422 || error.status === 409) return { kind: "stale", status: error.status };
    throw error;
  }
}
