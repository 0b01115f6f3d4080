// The only code that writes a node's taints. A JSON patch whose first op `test`s the whole taint list as it was
// read: if anyone changed any taint in between, the API server refuses the patch (422) and nothing is written;
// the node is then read afresh and the same edit applied to what is really there. So a concurrent taint change
// is never lost, and nothing but spec.taints is ever sent.
import { ApiError } from "../kube/api-error.js";
import type { KubeTransport } from "../kube/transport.js";
import { type NodeFacts, type Taint, toNodeFacts } from "./node-facts.js";
import { applyEdit, type TaintEdit } from "./taint-edit.js";

/** Reads before giving up: each lost race re-reads once; a node changing its taints this often is left for later. */
const MAX_ATTEMPTS = 4;

export type PatchOutcome =
  /** Written: the node as the server returned it. */
  | { readonly kind: "patched"; readonly node: NodeFacts; readonly attempts: number }
  /** Nothing to write: the edit was already true of the node (someone else did it). */
  | { readonly kind: "unchanged"; readonly node: NodeFacts }
  /** The node is gone. */
  | { readonly kind: "gone" };

const nodePath = (name: string) => `/api/v1/nodes/${encodeURIComponent(name)}`;

/** The ops: test the list as read (null when absent), then set the new list (or drop the field when empty). */
export function taintPatch(read: readonly Taint[] | undefined, next: readonly Taint[]): unknown[] {
  const test = { op: "test", path: "/spec/taints", value: read ?? null };
  if (next.length === 0) return [test, { op: "remove", path: "/spec/taints" }];
  return [test, { op: "add", path: "/spec/taints", value: next }];
}

/**
 * Applies the edit to the node's taints, starting from `seen` (the cache) and re-reading after each refused test.
 * Throws ApiError for anything but a lost race or a gone node (the caller retries with backoff).
 */
export async function patchTaints(transport: KubeTransport, seen: NodeFacts, edit: TaintEdit): Promise<PatchOutcome> {
  let node = seen;
  for (let attempt = 1; ; attempt++) {
    const next = applyEdit(node.taints, edit);
    if (next === undefined) return { kind: "unchanged", node };
    try {
      const { body } = await transport.request("patch", "PATCH", nodePath(node.name), {
        body: taintPatch(node.taints, next),
        contentType: "application/json-patch+json",
      });
      const patched = toNodeFacts(body);
      if (!patched) throw new Error(`PATCH of node ${node.name} returned no Node`);
      return { kind: "patched", node: patched, attempts: attempt };
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.status === 404) return { kind: "gone" };
      // 422: the test op failed (the taints changed since they were read); 409: a write raced ours.
      if ((error.status !== 422 && error.status !== 409) || attempt >= MAX_ATTEMPTS) throw error;
      const fresh = await readNode(transport, node.name);
      if (!fresh) return { kind: "gone" };
      node = fresh;
    }
  }
}

async function readNode(transport: KubeTransport, name: string): Promise<NodeFacts | undefined> {
  try {
    const { body } = await transport.request("get", "GET", nodePath(name));
    return toNodeFacts(body);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return undefined;
    throw error;
  }
}
