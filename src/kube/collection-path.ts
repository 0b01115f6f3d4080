// Where to list and watch a collection in a scope: one namespace is the namespaced path, never a selector term.
//
// Why: kube-apiserver (seen on 1.34) pages a cluster-wide list narrowed by `metadata.namespace=X` with continue
// tokens that leave the namespace out of their start key. The next page then starts at the wrong place: pods
// whose names sort after X are skipped (the list ends early) and others come twice. On the namespaced path the
// same tokens are right.
import type { Scope } from "../config/selectors.js";

/**
 * The collections the controller reads: pods, configmaps and daemonsets are namespaced (Istio's repair settings are
 * read from one namespace), namespaces and nodes are not.
 */
export type Collection = "pods" | "namespaces" | "nodes" | "configmaps" | "daemonsets";

/** Where each collection lives: core (v1) or its API group. */
const API_ROOT: Record<Collection, string> = {
  pods: "/api/v1",
  namespaces: "/api/v1",
  nodes: "/api/v1",
  configmaps: "/api/v1",
  daemonsets: "/apis/apps/v1",
};
const NAMESPACED: ReadonlySet<Collection> = new Set(["pods", "configmaps", "daemonsets"]);

export type CollectionRequest = {
  readonly path: string;
  readonly query: { readonly labelSelector?: string; readonly fieldSelector?: string };
};

export function collectionRequest(collection: Collection, scope: Scope): CollectionRequest {
  const root = API_ROOT[collection];
  const path =
    NAMESPACED.has(collection) && scope.namespace !== undefined
      ? `${root}/namespaces/${encodeURIComponent(scope.namespace)}/${collection}`
      : `${root}/${collection}`;
  return {
    path,
    query: {
      ...(scope.labelSelector !== undefined && { labelSelector: scope.labelSelector }),
      ...(scope.fieldSelector !== undefined && { fieldSelector: scope.fieldSelector }),
    },
  };
}
