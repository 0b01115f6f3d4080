// The initial state of a collection, item by item. From a watch that streams it (WatchList: sendInitialEvents,
// on by default since Kubernetes 1.32) when the server offers it, else from a paginated LIST. Streaming holds one
// object of ~14 KB at a time; a 500-pod page is 7 MB of text and tens of MB of parsed objects at once, and the
// process keeps that peak (V8's young generation, malloc) long after the list.
import type { Scope } from "../config/selectors.js";
import { ApiError, watchErrorEvent } from "../kube/api-error.js";
import type { Collection } from "../kube/collection-path.js";
import { listPage, openWatch } from "../kube/pods-api.js";
import { type ProtobufObjects, UndecodableObject } from "../kube/protobuf-objects.js";
import type { KubeTransport } from "../kube/transport.js";
import { StallWatchdog } from "./stall-watchdog.js";
import { readWatch } from "./watch-stream.js";

export type InitialListOptions = {
  readonly transport: KubeTransport;
  readonly collection: Collection;
  readonly scope: Scope;
  readonly pageSize: number;
  /** A streamed list that delivers no byte for this long is dead. */
  readonly stallTimeoutMs: number;
  readonly signal: AbortSignal;
  /** The server answered (a page, a watch's head or bytes). */
  readonly heard: () => void;
  /** Asks for Kubernetes protobuf, decoded by this (JSON when the server answers it); JSON only when absent. */
  readonly protobuf?: ProtobufObjects | undefined;
  /** Each item: the JSON object, the protobuf decoder's view of it, or an UndecodableObject. */
  readonly item: (object: unknown) => void;
  /** After each page, and every pageSize streamed items. */
  readonly progress: () => void;
};

export type ListedVia = "watch-list" | "pages";

/** The server cannot stream the list: WatchList off or unknown there. Pages will do. */
class WatchListUnsupported extends Error {}

/** The annotation of the bookmark that ends the initial events (a protobuf projection must keep it). */
export const INITIAL_EVENTS_END = "k8s.io/initial-events-end";
/** The server ends a watch after this; the initial events of 100k pods take well under it. */
const WATCH_LIST_TIMEOUT_S = 1_800;

/** Lists by WatchList until the server shows it cannot (then by pages, for good). */
export class InitialLister {
  #watchList: boolean;

  constructor(tryWatchList: boolean) {
    this.#watchList = tryWatchList;
  }

  /** Feeds every item to options.item; resolves with the resourceVersion to watch from and how it listed. */
  async list(options: InitialListOptions): Promise<{ resourceVersion: string; via: ListedVia }> {
    if (this.#watchList) {
      try {
        return { resourceVersion: await streamedList(options), via: "watch-list" };
      } catch (error) {
        if (!unsupported(error) || options.signal.aborted) throw error;
        this.#watchList = false;
      }
    }
    return { resourceVersion: await pagedList(options), via: "pages" };
  }
}

/** 400 (an old server refuses resourceVersionMatch on a watch) or 422 (WatchList switched off) means no. */
function unsupported(error: unknown): boolean {
  return error instanceof WatchListUnsupported || (error instanceof ApiError && [400, 422].includes(error.status));
}

async function streamedList(options: InitialListOptions): Promise<string> {
  const watchdog = new StallWatchdog(options.stallTimeoutMs);
  let items = 0;
  try {
    watchdog.arm();
    const response = await openWatch(options.transport, options.collection, options.scope, {
      resourceVersion: "",
      timeoutSeconds: WATCH_LIST_TIMEOUT_S,
      signal: AbortSignal.any([options.signal, watchdog.signal]),
      initialEvents: true,
      protobuf: options.protobuf !== undefined,
    });
    options.heard();
    const chunk = () => {
      options.heard();
      watchdog.arm();
    };
    let end: string | undefined;
    await readWatch(response, options.protobuf, chunk, (event, stop) => {
      // The reflector reads it again as JSON (or, keyless, goes back to JSON altogether).
      if (event.object instanceof UndecodableObject) return options.item(event.object);
      if (event.type === "ERROR") throw watchErrorEvent(event.object);
      if (event.type === "BOOKMARK") {
        end = initialEventsEnd(event.object);
        if (end !== undefined) stop();
        return;
      }
      if (event.type !== "ADDED")
        throw new WatchListUnsupported(`a ${event.type} event before the initial events ended`);
      options.item(event.object);
      if (++items % options.pageSize === 0) options.progress();
    });
    if (end !== undefined) return end;
    throw new WatchListUnsupported("the watch ended without its initial-events-end bookmark");
  } catch (error) {
    if (watchdog.stalled) throw new Error(`no byte from the API server for ${options.stallTimeoutMs} ms while listing`);
    throw error;
  } finally {
    watchdog.dispose();
  }
}

/** The bookmark's resourceVersion when it marks the end of the initial events, else undefined. */
function initialEventsEnd(object: unknown): string | undefined {
  const metadata = (object as { metadata?: { resourceVersion?: unknown; annotations?: Record<string, unknown> } })
    ?.metadata;
  if (metadata?.annotations?.[INITIAL_EVENTS_END] !== "true") return undefined;
  const version = metadata.resourceVersion;
  if (typeof version !== "string" || version === "")
    throw new Error("initial-events-end bookmark has no resourceVersion");
  return version;
}

async function pagedList(options: InitialListOptions): Promise<string> {
  let continueToken: string | undefined;
  let resourceVersion = "";
  do {
    const page = await listPage(
      options.transport,
      options.collection,
      options.scope,
      { limit: options.pageSize, continueToken, signal: options.signal },
      options.protobuf,
    );
    options.heard();
    for (const item of page.items) options.item(item);
    continueToken = page.continueToken;
    resourceVersion = page.resourceVersion;
    options.progress();
  } while (continueToken !== undefined);
  return resourceVersion;
}
