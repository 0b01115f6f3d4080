// Requests to an HTTPS API server over one node:http2 session, dialled at the first request and again after the
// server closes it, goes away or stops answering PINGs.
//
// Why hand-written and not undici: undici's HTTP/2 client runs each request through its agent, pool, client and
// request queue and their handler wrappers before Node's own Http2Session.request, which it then calls anyway.
// Measured against the bench's API server, the same Event POST through undici's dispatch and straight on a
// session cost 783/788 against 568/524 µs of CPU (bench/README.md): a repaired pod writes 4 requests, and a DELETE's
// CPU is repair latency. Not loading undici also takes its modules off every per-node start. What undici adds that
// is kept here: one connection dialled on demand, its PING check, its receive windows, and HTTP/1.1 for a server
// that does not offer HTTP/2 (the dial asks for either; such a server's requests go to undici's Agent instead).

import type { IncomingHttpHeaders } from "node:http";
import { type ClientHttp2Session, type ClientHttp2Stream, constants, connect as http2Connect } from "node:http2";
import { type TLSSocket, connect as tlsConnect } from "node:tls";
import type { TlsOptions } from "./cluster-credentials.js";
import type { Connections, DispatchController, DispatchHandler, DispatchRequest } from "./dispatch.js";

export type Http2Settings = {
  readonly tls: TlsOptions;
  /**
   * A session whose PING is still unanswered when the next is due is dropped, so requests after a silent network
   * failure dial afresh instead of queueing on a dead connection.
   */
  readonly pingIntervalMs: number;
  /**
   * How long a dial may take to its finished TLS handshake. Every request waiting for a connection waits on the one
   * dial, and a peer that accepts TCP but never answers the handshake (a hung load balancer, a black-holed path)
   * is not caught by TCP keep-alive: its probes are answered.
   */
  readonly dialTimeoutMs: number;
  /** What the server may send a stream ahead of our reads (SETTINGS_INITIAL_WINDOW_SIZE). */
  readonly streamWindowBytes: number;
  /** The same, shared by every stream of the session. */
  readonly connectionWindowBytes: number;
  /** Connections for a server that answers the TLS handshake with HTTP/1.1: undici's, loaded then. */
  readonly http1: () => Connections;
};

/**
 * Node's default credit for a session's buffered frames is 10 MB, past which it refuses new streams: with 4 MiB
 * stream windows a 10,000-pod list in flight could have a DELETE refused. The windows bound what is buffered.
 */
const MAX_SESSION_MEMORY_MB = 64;

/** How long close() lets the streams still open finish before it drops the session. */
const CLOSE_GRACE_MS = 2_000;

type Dialled = { readonly kind: "h2"; readonly session: ClientHttp2Session } | { readonly kind: "http1" };

export class Http2Connections implements Connections {
  readonly #origin: URL;
  readonly #settings: Http2Settings;
  /** The session new requests go on; undefined before the first dial and after it closed or went away. */
  #session: ClientHttp2Session | undefined;
  #dialling: Promise<Dialled> | undefined;
  #http1: Connections | undefined;
  #closed = false;
  /** Streams open on each session: a session holds the process up only while it carries one. */
  readonly #open = new WeakMap<ClientHttp2Session, number>();

  constructor(origin: string, settings: Http2Settings) {
    this.#origin = new URL(origin);
    this.#settings = settings;
  }

  dispatch(request: DispatchRequest, handler: DispatchHandler): void {
    if (this.#http1 && !this.#closed) {
      this.#http1.dispatch(request, handler);
      return;
    }
    this.#route(new Exchange(request, handler));
  }

  /** On the live session, or on one dialled for it (every request that comes meanwhile waits on the same dial). */
  #route(exchange: Exchange): void {
    if (this.#closed) {
      exchange.fail(new Error(`connections to ${this.#origin.origin} are closed`));
      return;
    }
    const session = this.#session;
    if (session && !session.closed && !session.destroyed) {
      this.#start(session, exchange);
      return;
    }
    this.#dial().then(
      (dialled) => {
        if (dialled.kind === "h2") this.#start(dialled.session, exchange);
        else exchange.handOver(this.#http1 as Connections);
      },
      (error: unknown) => exchange.fail(error instanceof Error ? error : new Error(String(error))),
    );
  }

  async close(): Promise<void> {
    this.#closed = true;
    const session = this.#session;
    this.#session = undefined;
    await this.#http1?.close();
    if (!session || session.destroyed) return;
    // Held up while it closes (an idle session is unref'd: awaiting its close would otherwise end the process), and
    // for CLOSE_GRACE_MS at most: a stream still open on a peer that stopped answering would wait for ever.
    session.ref();
    await new Promise<void>((resolve) => {
      const grace = setTimeout(() => session.destroy(), CLOSE_GRACE_MS);
      session.once("close", () => {
        clearTimeout(grace);
        resolve();
      });
      session.close();
    });
  }

  #start(session: ClientHttp2Session, exchange: Exchange): void {
    const open = this.#open.get(session) ?? 0;
    this.#open.set(session, open + 1);
    if (open === 0) session.ref();
    const onDone = () => {
      const left = (this.#open.get(session) ?? 1) - 1;
      this.#open.set(session, left);
      if (left === 0 && !session.destroyed && !this.#closed) session.unref();
    };
    exchange.start(session, onDone, () => this.#route(exchange));
  }

  /** One dial at a time; every request that came meanwhile waits for it. */
  #dial(): Promise<Dialled> {
    this.#dialling ??= this.#handshake().finally(() => {
      this.#dialling = undefined;
    });
    return this.#dialling;
  }

  /** TLS offering h2 and http/1.1; an HTTP/2 session on the socket if the server chose h2. */
  async #handshake(): Promise<Dialled> {
    const socket = await secureSocket(this.#origin, this.#settings.tls, this.#settings.dialTimeoutMs);
    if (this.#closed) {
      socket.destroy();
      throw new Error(`connections to ${this.#origin.origin} are closed`);
    }
    if (socket.alpnProtocol !== "h2") {
      socket.destroy();
      this.#http1 ??= this.#settings.http1();
      return { kind: "http1" };
    }
    const session = http2Connect(this.#origin.origin, {
      createConnection: () => socket,
      settings: { enablePush: false, initialWindowSize: this.#settings.streamWindowBytes },
      maxSessionMemory: MAX_SESSION_MEMORY_MB,
    });
    this.#watch(session);
    this.#session = session;
    session.unref();
    return { kind: "h2", session };
  }

  /** Stops new requests going on a session that closed, went away or failed; drops one that stops answering PINGs. */
  #watch(session: ClientHttp2Session): void {
    const retire = () => {
      if (this.#session === session) this.#session = undefined;
    };
    session.on("connect", () => session.setLocalWindowSize(this.#settings.connectionWindowBytes));
    // Streams already on a session that went away finish there (up to the last stream the server named).
    session.on("goaway", retire);
    session.on("close", retire);
    // Its streams fail with it; a listener must be there, or the error would end the process.
    session.on("error", retire);
    session.on("frameError", () => {});
    let awaitingPong = false;
    const ping = setInterval(() => {
      if (session.destroyed) {
        clearInterval(ping);
        return;
      }
      if (awaitingPong) {
        retire();
        session.destroy(
          new Error(`${this.#origin.origin} did not answer an HTTP/2 PING within ${this.#settings.pingIntervalMs} ms`),
        );
        return;
      }
      awaitingPong = true;
      session.ping(() => {
        awaitingPong = false;
      });
    }, this.#settings.pingIntervalMs);
    ping.unref();
    session.on("close", () => clearInterval(ping));
  }
}

/**
 * A TLS connection to `origin` offering HTTP/2 and HTTP/1.1, with the server's TLS settings and TCP keep-alive;
 * given up if its handshake has not finished within `timeoutMs`.
 */
function secureSocket(origin: URL, tls: TlsOptions, timeoutMs: number): Promise<TLSSocket> {
  // URL keeps an IPv6 literal's brackets; a socket wants the address.
  const host = origin.hostname.replace(/^\[(.*)\]$/, "$1");
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({
      host,
      port: Number(origin.port || 443),
      ALPNProtocols: ["h2", "http/1.1"],
      ...(tls.ca !== undefined && { ca: tls.ca }),
      ...(tls.cert !== undefined && { cert: tls.cert }),
      ...(tls.key !== undefined && { key: tls.key }),
      ...(tls.rejectUnauthorized !== undefined && { rejectUnauthorized: tls.rejectUnauthorized }),
      ...(tls.servername !== undefined && { servername: tls.servername }),
    });
    socket.setKeepAlive(true, 30_000);
    const deadline = setTimeout(
      () => failed(new Error(`${origin.origin}: no TLS handshake within ${timeoutMs} ms of the dial`)),
      timeoutMs,
    );
    const failed = (error: Error) => {
      clearTimeout(deadline);
      socket.destroy();
      reject(error);
    };
    socket.once("error", failed);
    socket.once("secureConnect", () => {
      clearTimeout(deadline);
      socket.off("error", failed);
      resolve(socket);
    });
  });
}

/**
 * How often a request is sent again when the server refuses its stream before processing any of it: RST_STREAM
 * REFUSED_STREAM, which is also how HTTP/2 closes the streams a GOAWAY leaves unprocessed. RFC 9113 section 8.7
 * says such a request, whatever its method, can be retried safely; Go's client (client-go) does. Without it the
 * start's who-am-I probe, refused as a new connection opened, read as "server not up yet", so rejected credentials
 * were not reported and the process kept running.
 */
const MAX_REFUSED_RESENDS = 3;

/** One request on a session: its stream's events handed to the handler, exactly one end or error. */
class Exchange implements DispatchController {
  readonly #request: DispatchRequest;
  readonly #handler: DispatchHandler;
  #stream: ClientHttp2Stream | undefined;
  #done = false;
  #onDone: (() => void) | undefined;
  #started = false;
  #answered = false;
  #resends = 0;

  constructor(request: DispatchRequest, handler: DispatchHandler) {
    this.#request = request;
    this.#handler = handler;
  }

  abort(reason: Error): void {
    if (this.#done) return;
    this.#stream?.close(constants.NGHTTP2_CANCEL);
    this.fail(reason);
  }

  fail(error: Error): void {
    if (this.#finish()) this.#handler.onResponseError?.(this, error);
  }

  /** Hands the request to other connections (HTTP/1.1, when a dial for it found a server without HTTP/2). */
  handOver(connections: Connections): void {
    if (!this.#done) connections.dispatch(this.#request, this.#handler);
  }

  /** Sends it on `session`; `resend` routes it again if the server refuses the stream unprocessed. */
  start(session: ClientHttp2Session, onDone: () => void, resend: () => void): void {
    if (!this.#started) {
      this.#started = true;
      this.#handler.onRequestStart?.(this, {});
    }
    // Aborted as it started (its caller gave up while it waited for the connection): never sent.
    if (this.#done) {
      onDone();
      return;
    }
    this.#onDone = onDone;
    const { method, path, headers, body } = this.#request;
    const hasBody = body !== undefined && body !== null;
    let stream: ClientHttp2Stream;
    try {
      stream = session.request(
        {
          ...headers,
          ":method": method,
          ":path": path,
          ...(hasBody && { "content-length": String(Buffer.byteLength(body)) }),
        },
        { endStream: !hasBody },
      );
    } catch (error) {
      this.fail(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    this.#stream = stream;
    stream.on("response", (responseHeaders) => {
      if (this.#done) return;
      this.#answered = true;
      // Handed on with its ":status" still in: readers look headers up by name, and a copy without it was ~4% of a
      // small request's CPU.
      this.#handler.onResponseStart?.(this, Number(responseHeaders[":status"]), responseHeaders as IncomingHttpHeaders);
    });
    stream.on("data", (chunk: Buffer) => {
      if (!this.#done) this.#handler.onResponseData?.(this, chunk);
    });
    // node:http2 ends a stream without an error in two cases that are not an answer's end, and both fail here:
    // - no answer at all: the server reset it with NO_ERROR or CANCEL, or closed its connection cleanly (a FIN: a
    //   restarted API server, a proxy dropping connections). Handed on as an end, a watch waiting for its head
    //   would wait for ever.
    // - its connection closed mid-body (code CANCEL at the end): handed on as an end, a cut-off list page would
    //   be read as a whole one with fewer items.
    stream.on("end", () => {
      const code = stream.rstCode ?? constants.NGHTTP2_NO_ERROR;
      if (this.#answered && code === constants.NGHTTP2_NO_ERROR) {
        if (this.#finish()) this.#handler.onResponseEnd?.(this, {});
        return;
      }
      if (this.#done || this.#stream !== stream || this.#resentAfterRefusal(stream, resend)) return;
      this.fail(
        new Error(
          this.#answered
            ? `HTTP/2 stream closed before the answer's end (code ${code})`
            : `HTTP/2 stream ended before any answer (code ${code})`,
        ),
      );
    });
    stream.on("error", (error: Error) => {
      if (this.#stream === stream && !this.#resentAfterRefusal(stream, resend)) this.fail(error);
    });
    // Every stream closes, most after their answer's end: an Error (its stack trace) only for one that did not.
    stream.on("close", () => {
      if (this.#done || this.#stream !== stream || this.#resentAfterRefusal(stream, resend)) return;
      this.fail(new Error(`HTTP/2 stream closed before the answer's end (code ${stream.rstCode ?? "none"})`));
    });
    if (hasBody) stream.end(body);
  }

  /** True when the server refused the stream before any answer and the request went out again (at most 3 times). */
  #resentAfterRefusal(stream: ClientHttp2Stream, resend: () => void): boolean {
    const refused = stream.rstCode === constants.NGHTTP2_REFUSED_STREAM && !this.#answered;
    if (this.#done || !refused || this.#resends >= MAX_REFUSED_RESENDS) return false;
    this.#resends++;
    this.#stream = undefined;
    // This session's count of open streams goes down; the next start counts on the session it goes on.
    const onDone = this.#onDone;
    this.#onDone = undefined;
    onDone?.();
    resend();
    return true;
  }

  /** True the first time: the exchange is over, and its session's count of open streams goes down. */
  #finish(): boolean {
    if (this.#done) return false;
    this.#done = true;
    this.#onDone?.();
    return true;
  }
}
