// The pod calls the controller makes: paginated list, watch, delete with preconditions, label via pods/status.
import type { Scope } from "../config/selectors.js";
import { ApiError } from "./api-error.js";
import { type Collection, collectionRequest } from "./collection-path.js";
import { METADATA_ONLY } from "./metadata-only.js";
import { isProtobuf, openEnvelope, PROTOBUF_CONTENT_TYPE, readListMessage } from "./protobuf-envelope.js";
import { decodeItem, type ObjectKey, type ProtobufObjects } from "./protobuf-objects.js";
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

/**
 * Asks for protobuf, and takes JSON when the server answers that instead (its Content-Type says which): client-go
 * asks the same way for built-in kinds.
 */
const PROTOBUF_OR_JSON = `${PROTOBUF_CONTENT_TYPE}, application/json`;

/**
 * One page of a list of a collection in a scope. With `protobuf`, asked for as Kubernetes protobuf and its items
 * decoded by it (an item it cannot read comes as an UndecodableObject); JSON otherwise, or when the server answers it.
 */
export async function listPage(
  transport: KubeTransport,
  collection: Collection,
  scope: Scope,
  page: { limit: number; continueToken: string | undefined; signal?: AbortSignal },
  protobuf?: ProtobufObjects,
): Promise<PodListPage> {
  const request = collectionRequest(collection, scope);
  const answer = await transport.requestBytes("list", "GET", request.path, {
    query: {
      ...request.query,
      limit: page.limit,
      continue: page.continueToken,
    },
    ...(protobuf && { accept: PROTOBUF_OR_JSON }),
    ...(page.signal && { signal: page.signal }),
    timeoutMs: 60_000,
  });
  if (protobuf && isProtobuf(answer.contentType)) {
    const list = readListMessage(openEnvelope(answer.bytes).raw);
    if (list.resourceVersion === "") throw new Error(`list of ${request.path} carries no metadata.resourceVersion`);
    return {
      items: list.items.map((item) => decodeItem(item, protobuf)),
      resourceVersion: list.resourceVersion,
      continueToken: list.continueToken === "" ? undefined : list.continueToken,
    };
  }
  const body: unknown = answer.bytes.length > 0 ? JSON.parse(answer.bytes.toString("utf8")) : undefined;
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
  options: {
    resourceVersion: string;
    timeoutSeconds: number;
    signal: AbortSignal;
    initialEvents?: boolean;
    /** Ask for a protobuf stream (the server may still answer JSON: read the response's contentType). */
    protobuf?: boolean;
  },
): Promise<WatchResponse> {
  const request = collectionRequest(collection, scope);
  return await transport.stream(request.path, {
    ...(options.protobuf && { accept: PROTOBUF_OR_JSON }),
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
 * One object of a namespaced collection as JSON now, or undefined when it is gone (404): how a watch or list reads
 * an object its protobuf decoder could not.
 */
export async function getObject(
  transport: KubeTransport,
  collection: Collection,
  key: ObjectKey,
  signal?: AbortSignal,
): Promise<unknown> {
  const path = `${collectionRequest(collection, { namespace: key.namespace }).path}/${encodeURIComponent(key.name)}`;
  try {
    const { body } = await transport.request("get", "GET", path, {
      ...(signal && { signal }),
    });
    return body;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return undefined;
    throw error;
  }
}

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
  await transport.requestBytes("delete", "DELETE", podPath(pod.namespace, pod.name), {
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
  await transport.requestBytes("patch", "PATCH", `${podPath(pod.namespace, pod.name)}/status`, {
    body: { metadata: { resourceVersion, labels } },
    contentType: "application/merge-patch+json",
    accept: METADATA_ONLY,
  });
}
