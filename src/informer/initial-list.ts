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
import type { WatchEventHandler } from "./watch-lines.js";
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
  /**
   * Go on reading a streamed list as the watch, as client-go's reflector does: one request where a list and a watch
   * would be two (at a fleet's rollout, requests the one API server answers per instance). At the end bookmark,
   * `listed` gets its resourceVersion and applies the list; when it returns true, every later event goes to
   * `event` until the stream ends, and the result says how it ended (`watched`). False ends the stream there.
   */
  readonly watchOn?: {
    readonly listed: (resourceVersion: string) => boolean;
    readonly event: WatchEventHandler;
  };
};

export type ListedVia = "watch-list" | "pages";

/** How a streamed list that went on as the watch ended: at the server's timeout, or with an error (or a stall). */
export type WatchedOn = { readonly error?: unknown; readonly stalled: boolean };

export type Listed = {
  readonly resourceVersion: string;
  readonly via: ListedVia;
  /** Present when the stream went on as the watch (watchOn): the list was applied by `listed`, and it ended so. */
  readonly watched?: WatchedOn;
};

/** The server cannot stream the list: WatchList off or unknown there. Pages will do. */
class WatchListUnsupported extends Error {}

/** The annotation of the bookmark that ends the initial events (a protobuf projection must keep it). */
export const INITIAL_EVENTS_END = "k8s.io/initial-events-end";
/**
 * The server ends a watch after this; the initial events of 100k pods take well under it. Randomised in [t, 2t), as
 * every watch: the instances of a fleet rolled out at once must not all watch again in the same second.
 */
const WATCH_LIST_TIMEOUT_S = 1_800;

/** Lists by WatchList until the server shows it cannot (then by pages, for good). */
export class InitialLister {
  #watchList: boolean;

  constructor(tryWatchList: boolean) {
    this.#watchList = tryWatchList;
  }

  /** Feeds every item to options.item; resolves with the resourceVersion to watch from and how it listed. */
  async list(options: InitialListOptions): Promise<Listed> {
    if (this.#watchList) {
      try {
        return { ...(await streamedList(options)), via: "watch-list" };
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

async function streamedList(options: InitialListOptions): Promise<Omit<Listed, "via">> {
  const watchdog = new StallWatchdog(options.stallTimeoutMs);
  let items = 0;
  /** The end bookmark's resourceVersion, and whether the stream went on as the watch from there. */
  const stream: { end: string | undefined; watchingOn: boolean } = { end: undefined, watchingOn: false };
  try {
    watchdog.arm();
    const response = await openWatch(options.transport, options.collection, options.scope, {
      resourceVersion: "",
      timeoutSeconds: Math.round(WATCH_LIST_TIMEOUT_S * (1 + Math.random())),
      signal: AbortSignal.any([options.signal, watchdog.signal]),
      initialEvents: true,
      protobuf: options.protobuf !== undefined,
    });
    options.heard();
    const chunk = () => {
      options.heard();
      watchdog.arm();
    };
    await readWatch(response, options.protobuf, chunk, (event, stop) => {
      if (stream.watchingOn) return options.watchOn?.event(event, stop);
      // The reflector reads it again as JSON (or, keyless, goes back to JSON altogether).
      if (event.object instanceof UndecodableObject) return options.item(event.object);
      if (event.type === "ERROR") throw watchErrorEvent(event.object);
      if (event.type === "BOOKMARK") {
        stream.end = initialEventsEnd(event.object);
        if (stream.end === undefined) return;
        stream.watchingOn = options.watchOn?.listed(stream.end) ?? false;
        if (!stream.watchingOn) stop();
        return;
      }
      if (event.type !== "ADDED")
        throw new WatchListUnsupported(`a ${event.type} event before the initial events ended`);
      options.item(event.object);
      if (++items % options.pageSize === 0) options.progress();
    });
    const { end, watchingOn } = stream;
    if (end === undefined) throw new WatchListUnsupported("the watch ended without its initial-events-end bookmark");
    return watchingOn ? { resourceVersion: end, watched: { stalled: false } } : { resourceVersion: end };
  } catch (error) {
    // Past the end bookmark the list is applied: what ends the stream ends the watch, for the caller to judge.
    const { end, watchingOn } = stream;
    if (watchingOn && end !== undefined) return { resourceVersion: end, watched: { error, stalled: watchdog.stalled } };
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
