// The pod calls the controller makes: paginated list, watch, delete with preconditions, label via pods/status.
import type { Scope } from "../config/selectors.js";
import { type Collection, collectionRequest } from "./collection-path.js";
import type { KubeTransport, WatchResponse } from "./transport.js";

export type PodListPage = {
  readonly items: readonly unknown[];
  readonly resourceVersion: string;
  /** Token for the next page; undefined on the last one. */
  readonly continueToken: string | undefined;
};

export type Preconditions = { readonly uid: string; readonly resourceVersion: string };

const podPath = (namespace: string, name: string): string =>
  `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;

/** One page of a list of a collection in a scope. */
export async function listPage(
  transport: KubeTransport,
  collection: Collection,
  scope: Scope,
  page: { limit: number; continueToken: string | undefined; signal?: AbortSignal },
): Promise<PodListPage> {
  const request = collectionRequest(collection, scope);
  const { body } = await transport.request("list", "GET", request.path, {
    query: {
      ...request.query,
      limit: page.limit,
      continue: page.continueToken,
    },
    ...(page.signal && { signal: page.signal }),
    timeoutMs: 60_000,
  });
  const list = (body ?? {}) as { items?: unknown; metadata?: { resourceVersion?: unknown; continue?: unknown } };
  const resourceVersion = list.metadata?.resourceVersion;
  if (typeof resourceVersion !== "string" || resourceVersion === "") {
    throw new Error(`list of ${request.path} carries no metadata.resourceVersion`);
  }
  const continueToken = list.metadata?.continue;
  return {
    items: Array.isArray(list.items) ? list.items : [],
    resourceVersion,
    continueToken: typeof continueToken === "string" && continueToken !== "" ? continueToken : undefined,
  };
}

/**
 * Opens a watch of a collection in scope from a resourceVersion; the server ends it after timeoutSeconds. With
 * initialEvents (WatchList) and no resourceVersion the server first sends the current state as ADDED events, then
 * a BOOKMARK annotated k8s.io/initial-events-end, then changes.
 */
export async function openWatch(
  transport: KubeTransport,
  collection: Collection,
  scope: Scope,
  options: { resourceVersion: string; timeoutSeconds: number; signal: AbortSignal; initialEvents?: boolean },
): Promise<WatchResponse> {
  const request = collectionRequest(collection, scope);
  return await transport.stream(request.path, {
    query: {
      watch: true,
      allowWatchBookmarks: true,
      resourceVersion: options.resourceVersion,
      timeoutSeconds: options.timeoutSeconds,
      ...(options.initialEvents && { sendInitialEvents: true, resourceVersionMatch: "NotOlderThan" }),
      ...request.query,
    },
    signal: options.signal,
  });
}

/**
 * The answer to a write whose object we do not read: only its metadata (as client-go's metadata client asks), so
 * the server encodes and we parse that, not the spec and status that are most of a sidecar-injected pod.
 * Refusals are Status objects either way; a server that cannot convert answers the plain JSON listed after it.
 */
const METADATA_ONLY = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json";

/**
 * Deletes the pod only if it is still the very object that was judged: same UID (not a replacement with the
 * same name) and same resourceVersion (not changed since). A mismatch answers 409; a gone pod 404.
 * dryRun runs admission, authorization and the preconditions for real without deleting.
 */
export async function deletePod(
  transport: KubeTransport,
  pod: { namespace: string; name: string },
  preconditions: Preconditions,
  options: { dryRun: boolean },
): Promise<void> {
  // dryRun goes in the body: the API server ignores DELETE query parameters when a body is present.
  await transport.request("delete", "DELETE", podPath(pod.namespace, pod.name), {
    accept: METADATA_ONLY,
    body: { apiVersion: "v1", kind: "DeleteOptions", preconditions, ...(options.dryRun && { dryRun: ["All"] }) },
  });
}

/**
 * Sets labels through the pods/status subresource (a narrower permission than patching pods). The
 * resourceVersion in the patch makes the server refuse (409) a pod that changed since it was judged.
 */
export async function labelPodViaStatus(
  transport: KubeTransport,
  pod: { namespace: string; name: string },
  resourceVersion: string,
  /** null removes the label. */
  labels: Record<string, string | null>,
): Promise<void> {
  await transport.request("patch", "PATCH", `${podPath(pod.namespace, pod.name)}/status`, {
    body: { metadata: { resourceVersion, labels } },
    contentType: "application/merge-patch+json",
    accept: METADATA_ONLY,
  });
}
