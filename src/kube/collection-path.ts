// Where to list and watch a collection in a scope: one namespace is the namespaced path, never a selector term.
//
// Why: kube-apiserver (seen on 1.34) pages a cluster-wide list narrowed by `metadata.namespace=X` with continue
// tokens that leave the namespace out of their start key. The next page then starts at the wrong place: pods
// whose names sort after X are skipped (the list ends early) and others come twice. On the namespaced path the
// same tokens are right.
import type { Scope } from "../config/selectors.js";

/** The collections the controller reads: pods are namespaced, namespaces and nodes are not. */
export type Collection = "pods" | "namespaces" | "nodes";

export type CollectionRequest = {
  readonly path: string;
  readonly query: { readonly labelSelector?: string; readonly fieldSelector?: string };
};

export function collectionRequest(collection: Collection, scope: Scope): CollectionRequest {
  const path =
    collection === "pods" && scope.namespace !== undefined
      ? `/api/v1/namespaces/${encodeURIComponent(scope.namespace)}/pods`
      : `/api/v1/${collection}`;
  return {
    path,
    query: {
      ...(scope.labelSelector !== undefined && { labelSelector: scope.labelSelector }),
      ...(scope.fieldSelector !== undefined && { fieldSelector: scope.fieldSelector }),
    },
  };
}
