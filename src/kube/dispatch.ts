// The seam between the transport's request shapes (whole-response.ts, streamed-response.ts) and the connections
// that carry them: a request handed over with callbacks for its answer, as undici's Dispatcher takes it. Two
// implementations: node:http2 sessions (http2-connections.ts) for an HTTPS server that speaks HTTP/2, which every
// kube-apiserver does, and undici's Agent (undici-connections.ts) for plain HTTP and servers that speak only
// HTTP/1.1 (kubectl proxy, some authenticating proxies).
import type { IncomingHttpHeaders } from "node:http";

export type DispatchRequest = {
  /** scheme://host[:port] */
  readonly origin: string;
  /** Path and query. */
  readonly path: string;
  readonly method: string;
  /** Lower-case names. */
  readonly headers?: Record<string, string>;
  readonly body?: string | null;
};

/** Handed to the handler when its request starts; aborting stops it on the wire and fails it with `reason`. */
export interface DispatchController {
  abort(reason: Error): void;
}

/**
 * A request's life: started (onRequestStart), then a head (1xx heads first, if any), body chunks and the end; or an
 * error at any point, after which nothing else is called. An end comes only after a final head: a request that
 * ends without one fails. Aborted in onRequestStart, the request is never sent.
 */
export interface DispatchHandler {
  onRequestStart?(controller: DispatchController, context: unknown): void;
  onResponseStart?(
    controller: DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void;
  onResponseData?(controller: DispatchController, chunk: Buffer): void;
  onResponseEnd?(controller: DispatchController, trailers: unknown): void;
  onResponseError?(controller: DispatchController, error: Error): void;
}

/** Connections to one API server, shared by every request. */
export interface Connections {
  dispatch(request: DispatchRequest, handler: DispatchHandler): void;
  /** Closes the connections once the requests on them are done; later requests fail. */
  close(): Promise<void>;
}
