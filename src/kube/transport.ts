// HTTP to the API server: the credentials' auth and TLS, one connection (HTTP/2; http2-connections.ts), raw bytes.
//
// Why hand-written and not client-node's generated API classes: they build a new undici Agent (a new TLS
// handshake) per request, and deserialize every Pod into class instances with Date objects, which the
// compact cache would throw away at once; and loading them costs ~90 MB of RSS, more than a node agent's whole
// budget. Here the JSON goes straight to the facts transform, over one agent.
import type { IncomingHttpHeaders } from "node:http";
import { ApiError, apiErrorFromResponse } from "./api-error.js";
import type { Authentication, ClusterCredentials, TlsOptions } from "./cluster-credentials.js";
import { CredentialRefresh, CredentialsError } from "./credential-refresh.js";
import type { Connections } from "./dispatch.js";
import { Http2Connections } from "./http2-connections.js";
import { isProtobuf, openEnvelope, readStatusMessage } from "./protobuf-envelope.js";
import { type Query, RequestTargets } from "./request-target.js";
import { dispatchStreaming, type StreamedResponse, type WatchBody } from "./streamed-response.js";
import { undiciConnections } from "./undici-connections.js";
import { dispatchWhole, type WholeResponse } from "./whole-response.js";

export type Verb = "list" | "watch" | "get" | "create" | "update" | "delete" | "patch";

export type RequestOptions = {
  readonly query?: Query;
  readonly body?: unknown;
  readonly contentType?: string;
  /** The Accept header; plain JSON when omitted. */
  readonly accept?: string;
  readonly signal?: AbortSignal;
  /** Whole-request timeout; watches use their own stall watchdog instead. */
  readonly timeoutMs?: number;
};

export type ApiResponse = { readonly status: number; readonly body: unknown };

/** An answer's bytes as they came, with their Content-Type (a request that accepts protobuf may get JSON). */
export type BytesResponse = { readonly status: number; readonly contentType: string; readonly bytes: Buffer };

/** A watch's answer: the status and the body, which the caller reads to its end or destroys. */
export type WatchResponse = { readonly status: number; readonly contentType: string; readonly body: WatchBody };

/** Called once per request with its verb and status code label ("200", "409", "error"). */
export type RequestObserver = (verb: Verb, code: string) => void;

/** Auth headers can change (rotated service-account token, exec plugins): re-read them this often. */
const AUTH_REFRESH_MS = 10_000;
const DEFAULT_TIMEOUT_MS = 30_000;
/** How long a request waits for fresh credentials (an exec plugin): as long as it would wait for its answer. */
const CREDENTIALS_DEADLINE_MS = DEFAULT_TIMEOUT_MS;

export type TransportOptions = {
  readonly userAgent: string;
  readonly observe?: RequestObserver;
  /**
   * Loads the credentials afresh (re-reads token files, re-runs exec plugins, whose tokens client-node caches):
   * called after a 401, in case they were rotated. Without it a 401 only re-reads headers.
   */
  readonly reload?: () => ClusterCredentials;
  /**
   * HTTP/2 PING interval: a connection whose PING is still unanswered at the next one is dropped, so requests
   * after a silent network failure dial afresh instead of queueing on a dead connection. Default 60 s.
   */
  readonly connectionCheckMs?: number;
};

export class KubeTransport {
  readonly server: string;
  #credentialsSource: ClusterCredentials;
  readonly #observe: RequestObserver;
  readonly #userAgent: string;
  readonly #reload: (() => ClusterCredentials) | undefined;
  readonly #connectionCheckMs: number;
  #connections: Connections | undefined;
  /** Parsed at the first request, as the URL of each request was before. */
  #targets: RequestTargets | undefined;
  readonly #refresh = new CredentialRefresh(CREDENTIALS_DEADLINE_MS);
  /** The authentication the headers below came from: requests that joined one refresh apply it once. */
  #applied: Authentication | undefined;
  #headers: Record<string, string> = {};
  #headersReadAt = Number.NEGATIVE_INFINITY;
  /** Bumped each time the credentials are read, so a 401 can tell which credentials it answered. */
  #credentials = 0;
  /** The credentials read after the latest 401; a 401 to them too means they are rejected. */
  #reloadedAs: number | undefined;
  #rejected = false;

  constructor(credentials: ClusterCredentials, options: TransportOptions) {
    this.server = credentials.server;
    this.#credentialsSource = credentials;
    this.#observe = options.observe ?? (() => {});
    this.#userAgent = options.userAgent;
    this.#reload = options.reload;
    this.#connectionCheckMs = options.connectionCheckMs ?? 60_000;
  }

  /** The current credentials (for error messages and the default namespace). */
  get credentials(): ClusterCredentials {
    return this.#credentialsSource;
  }

  /**
   * True while the API server rejects (401) even the credentials loaded afresh after a 401: they are not going to
   * work, and /healthz says so. Each 401 loads them afresh again; any other answer clears it.
   */
  get credentialsRejected(): boolean {
    return this.#rejected;
  }

  /**
   * A JSON request; non-2xx answers throw ApiError. Dispatched with callbacks, not fetch: fetch's WHATWG Request,
   * Headers, Response and body stream cost about twice the CPU per request under the per-node instance's interpreter
   * flags (measured ~3 against ~1.5 ms a GET), and a DELETE's CPU is repair latency (whole-response.ts).
   */
  async request(verb: Verb, method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const answer = await this.#send(verb, method, path, options);
    return {
      status: answer.statusCode,
      body: answer.bytes.length > 0 ? JSON.parse(answer.bytes.toString("utf8")) : undefined,
    };
  }

  /**
   * A request whose answer is returned as bytes with its Content-Type: protobuf, or a write whose answer is not read
   * (left unparsed); non-2xx throw ApiError.
   */
  async requestBytes(verb: Verb, method: string, path: string, options: RequestOptions = {}): Promise<BytesResponse> {
    const answer = await this.#send(verb, method, path, options);
    return { status: answer.statusCode, contentType: contentTypeOf(answer.headers), bytes: answer.bytes };
  }

  /**
   * A streaming GET (watch); non-2xx answers throw ApiError. Its body comes by callbacks (streamed-response.ts):
   * no promise per chunk (a WHATWG body's for-await cost ~100 µs of CPU per event) and no Node stream either.
   */
  async stream(path: string, options: RequestOptions = {}): Promise<WatchResponse> {
    const { targets, headers, connections, credentials } = await this.#prepare("watch", "GET", path, options);
    let answer: StreamedResponse;
    try {
      // No timeout: the reader's stall watchdog, armed at the dial and at every chunk, is the stream's one deadline
      // (informer/stall-watchdog.ts).
      answer = await dispatchStreaming(
        connections,
        { origin: targets.origin, path: targets.target(path, options.query), method: "GET", headers },
        options.signal,
      );
    } catch (error) {
      throw this.#noResponse("watch", "GET", targets.pathOf(path), error, options.signal);
    }
    this.#answered("watch", answer.statusCode, credentials);
    if (answer.statusCode >= 200 && answer.statusCode < 300) {
      return { status: answer.statusCode, contentType: contentTypeOf(answer.headers), body: answer.body };
    }
    const bytes = Buffer.from(await answer.body.arrayBuffer().catch(() => new ArrayBuffer(0)));
    throw this.#errorOf("GET", targets.pathOf(path), answer.statusCode, answer.headers, bytes);
  }

  /** Closes the connections once their requests are done. */
  async close(): Promise<void> {
    await this.#connections?.close();
  }

  /** Sends the request and returns a 2xx answer; other answers throw ApiError. */
  async #send(verb: Verb, method: string, path: string, options: RequestOptions): Promise<WholeResponse> {
    const { targets, headers, connections, credentials } = await this.#prepare(verb, method, path, options);
    let answer: WholeResponse;
    try {
      answer = await dispatchWhole(
        connections,
        {
          origin: targets.origin,
          path: targets.target(path, options.query),
          method,
          headers,
          body: options.body === undefined ? null : JSON.stringify(options.body),
        },
        { signal: options.signal, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS },
      );
    } catch (error) {
      throw this.#noResponse(verb, method, targets.pathOf(path), error, options.signal);
    }
    this.#answered(verb, answer.statusCode, credentials);
    if (answer.statusCode >= 200 && answer.statusCode < 300) return answer;
    throw this.#errorOf(method, targets.pathOf(path), answer.statusCode, answer.headers, answer.bytes);
  }

  /** The ApiError of a non-2xx answer from its body (a Status, JSON or protobuf). */
  #errorOf(method: string, pathname: string, status: number, headers: IncomingHttpHeaders, bytes: Buffer): ApiError {
    const text = isProtobuf(headers["content-type"]) ? protobufStatusText(bytes) : bytes.toString("utf8");
    const retryAfter = headers["retry-after"];
    return apiErrorFromResponse(
      `${method} ${pathname}`,
      status,
      text,
      (Array.isArray(retryAfter) ? retryAfter[0] : retryAfter) ?? null,
    );
  }

  /**
   * Where requests go, the request headers, the connections, and which credentials they carry. Credentials that
   * cannot be had fail the request unsent, as an ApiError of status 0 (counted as an error): every caller already
   * handles a request that got no answer, and retries it.
   */
  async #prepare(
    verb: Verb,
    method: string,
    path: string,
    options: RequestOptions,
  ): Promise<{
    targets: RequestTargets;
    headers: Record<string, string>;
    connections: Connections;
    credentials: number;
  }> {
    this.#targets ??= new RequestTargets(this.server);
    let auth: Record<string, string>;
    let connections: Connections;
    try {
      ({ headers: auth, connections } = await this.#credentialsAndConnections(options.signal));
    } catch (error) {
      if (!(error instanceof CredentialsError)) throw error;
      this.#observe(verb, "error");
      throw new ApiError(`${method} ${this.#targets.pathOf(path)}: not sent: ${error.message}`, {
        status: 0,
        cause: error,
      });
    }
    const headers: Record<string, string> = {
      ...auth,
      accept: options.accept ?? "application/json",
      "user-agent": this.#userAgent,
    };
    if (options.body !== undefined) headers["content-type"] = options.contentType ?? "application/json";
    return { targets: this.#targets, headers, connections, credentials: this.#credentials };
  }

  /** A request that got no answer, counted; an ApiError of status 0 unless the caller aborted it. */
  #noResponse(verb: Verb, method: string, pathname: string, error: unknown, signal: AbortSignal | undefined): unknown {
    this.#observe(verb, "error");
    if (signal?.aborted) return error;
    const detail = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : "";
    return new ApiError(`${method} ${pathname}: no response from ${this.server}: ${detail}`, {
      status: 0,
      cause: error,
    });
  }

  #answered(verb: Verb, status: number, credentials: number): void {
    this.#observe(verb, String(status));
    this.#judgeCredentials(status, credentials);
  }

  /** Every 401 to the current credentials loads them afresh; a 401 to credentials so loaded means they are bad. */
  #judgeCredentials(status: number, credentials: number): void {
    if (status !== 401) {
      this.#reloadedAs = undefined;
      this.#rejected = false;
      return;
    }
    // Answered to credentials already replaced: the next request carries the new ones.
    if (credentials !== this.#credentials) return;
    if (this.#reloadedAs === credentials) this.#rejected = true;
    if (this.#reload) this.#credentialsSource = this.#reload();
    this.#headersReadAt = Number.NEGATIVE_INFINITY;
    this.#reloadedAs = credentials + 1;
  }

  /**
   * The credentials' headers (re-read every AUTH_REFRESH_MS) and the connections. Requests that find them stale
   * together share one refresh (credential-refresh.ts); a refresh that fails or hangs fails the request, which
   * throws a CredentialsError before anything is sent.
   */
  async #credentialsAndConnections(
    signal: AbortSignal | undefined,
  ): Promise<{ headers: Record<string, string>; connections: Connections }> {
    if (this.#connections && performance.now() - this.#headersReadAt < AUTH_REFRESH_MS) {
      return { headers: this.#headers, connections: this.#connections };
    }
    const authentication = await this.#refresh.authenticate(this.#credentialsSource, signal);
    // TLS material is read once: the connections stay open across credential refreshes.
    const connections = this.#connections ?? connectionsTo(this.server, authentication.tls, this.#connectionCheckMs);
    this.#connections = connections;
    if (authentication !== this.#applied) {
      this.#applied = authentication;
      this.#headers = authentication.headers;
      this.#headersReadAt = performance.now();
      this.#credentials++;
    }
    return { headers: this.#headers, connections };
  }
}

const contentTypeOf = (headers: IncomingHttpHeaders): string => {
  const value = headers["content-type"];
  return (Array.isArray(value) ? value[0] : value) ?? "";
};

/** A protobuf Status as the JSON text apiErrorFromResponse reads; the raw bytes when they are not one. */
function protobufStatusText(bytes: Buffer): string {
  try {
    return JSON.stringify(readStatusMessage(openEnvelope(bytes).raw));
  } catch {
    return bytes.toString("latin1").slice(0, 300);
  }
}

/**
 * HTTP/2 receive windows: how much the API server may send ahead of what we have read. undici's defaults (256 KiB
 * a stream, 512 KiB the connection) stopped the server every few pods of an initial list until our WINDOW_UPDATE
 * came back; client-go (Istio's controller) allows 4 MiB a stream. Measured from spawn to synced, A/B
 * (bench/README.md): 35-50 ms less CPU at 1,000 pods on the node, up to 240 ms at 10,000; RSS unchanged. What it can
 * cost is bounded: bytes a stream receives are handed on at once (streamed-response.ts), so data not yet read
 * waits in the socket's kernel buffer, at most this much of it.
 */
export const STREAM_WINDOW_BYTES = 4 * 1024 * 1024;
/** Shared by every stream of the connection (the list and the watches): two streams' worth. */
export const CONNECTION_WINDOW_BYTES = 2 * STREAM_WINDOW_BYTES;

/**
 * The longest a dial may take to its finished TLS handshake, whatever the PING interval: client-go gives a dial 30 s
 * (and its handshake 10 s). Every request waits on the one dial, a Lease renewal and a DELETE too, so after a path
 * to the server black-holed and came back, this is how long the process can still be waiting on the dead dial.
 */
const MAX_DIAL_MS = 30_000;

/** A dial's deadline: as long as a session may go without answering a PING (one interval to send it, one to hear
 * back), and no longer than MAX_DIAL_MS. */
export function dialDeadlineMs(pingIntervalMs: number): number {
  return Math.min(MAX_DIAL_MS, 2 * pingIntervalMs);
}

/** HTTPS: HTTP/2 on node:http2, HTTP/1.1 through undici if the server offers no HTTP/2; plain HTTP: undici. */
function connectionsTo(server: string, tls: TlsOptions, pingIntervalMs: number): Connections {
  if (!server.startsWith("https:")) return undiciConnections({});
  const pingMs = Math.max(1_000, Math.round(pingIntervalMs));
  return new Http2Connections(server, {
    tls,
    pingIntervalMs: pingMs,
    dialTimeoutMs: dialDeadlineMs(pingMs),
    streamWindowBytes: STREAM_WINDOW_BYTES,
    connectionWindowBytes: CONNECTION_WINDOW_BYTES,
    http1: () => undiciConnections(tls),
  });
}
