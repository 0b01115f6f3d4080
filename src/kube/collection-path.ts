// Where to list and watch a collection: a field selector that pins one namespace becomes the namespaced path.
//
// Why: kube-apiserver (seen on 1.34) pages a cluster-wide list narrowed by `metadata.namespace=X` with continue
// tokens that leave the namespace out of their start key. The next page then starts at the wrong place: pods
// whose names sort after X are skipped (the list ends early) and others come twice. On the namespaced path the
// same tokens are right.
import { splitUnescaped } from "../config/selectors.js";

export type CollectionRequest = { readonly path: string; readonly fieldSelector: string };

const ALL_PODS = "/api/v1/pods";
const PINNED_NAMESPACE = /^\s*metadata\.namespace\s*==?\s*([a-z0-9]([-a-z0-9]*[a-z0-9])?)\s*$/;

/** `/api/v1/pods` + `metadata.namespace=X,rest` → `/api/v1/namespaces/X/pods` + `rest`; anything else as is. */
export function collectionRequest(path: string, fieldSelector: string): CollectionRequest {
  if (path !== ALL_PODS) return { path, fieldSelector };
  const terms = splitUnescaped(fieldSelector);
  const pinned = new Set(terms.flatMap((term) => PINNED_NAMESPACE.exec(term)?.[1] ?? []));
  // None, or two different ones (which select nothing: the server says so), stay as they are.
  const [namespace] = pinned;
  if (pinned.size !== 1 || namespace === undefined) return { path, fieldSelector };
  return {
    path: `/api/v1/namespaces/${namespace}/pods`,
    fieldSelector: terms.filter((term) => !PINNED_NAMESPACE.test(term)).join(","),
  };
}
