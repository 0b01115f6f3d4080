// A streaming GET answered through the dispatch callbacks (dispatch.ts), its body handed on chunk by chunk with no
// stream of ours in between. Why: undici's request (which the transport used before) wraps each chunk in an async-context hop and a Readable push, whose
// 'data' event and read-ahead tick cost ~9% of the per-node instance's CPU per watch event (a CPU profile under
// its interpreter flags); a watch reads every chunk at once anyway, so a stream's buffering buys it nothing.
import { EventEmitter } from "node:events";
import type { IncomingHttpHeaders } from "node:http";
import type { Connections, DispatchController, DispatchHandler, DispatchRequest } from "./dispatch.js";

/** What a watch reader needs of a body: chunks, its end, an error, close, and a way to stop it (a Readable has it). */
export type WatchBody = {
  on(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  on(event: "end" | "close", listener: () => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  readonly destroyed: boolean;
  destroy(): unknown;
};

export type StreamedResponse = {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: DispatchedBody;
};

type Pending =
  | { readonly kind: "data"; readonly chunk: Uint8Array }
  | { readonly kind: "end" }
  | { readonly kind: "error"; readonly error: Error };

/**
 * The body: chunks that come before anyone listens (the head and the first bytes can arrive in one read, before the
 * caller's await resumes) wait until the first 'data' listener, then flow in order. It emits like a Readable:
 * 'data'…, then 'end' and 'close'; or 'error' and 'close'; destroy() stops the request and emits 'close'.
 */
export class DispatchedBody extends EventEmitter implements WatchBody {
  #abort: ((reason: Error) => void) | undefined;
  /** Undefined once flowing. */
  #waiting: Pending[] | undefined = [];
  #closed = false;

  get destroyed(): boolean {
    return this.#closed;
  }

  constructor() {
    super();
    // After the caller's listeners are all on (they add them in one go): a microtask after the first 'data' one.
    this.on("newListener", (event) => {
      if (event === "data" && this.#waiting) queueMicrotask(() => this.#flow());
    });
  }

  /** Stops the request (if still going) and closes the body; later chunks and errors are dropped. */
  destroy(): this {
    if (this.#closed) return this;
    this.#closed = true;
    this.#waiting = undefined;
    this.#abort?.(new Error("response body destroyed"));
    this.emit("close");
    return this;
  }

  /** The whole body (an error answer's Status). */
  async arrayBuffer(): Promise<ArrayBuffer> {
    const chunks: Uint8Array[] = [];
    await new Promise<void>((resolve, reject) => {
      this.on("error", reject);
      this.on("close", () => reject(new Error("response body closed before its end")));
      this.on("end", resolve);
      this.on("data", (chunk) => chunks.push(chunk));
    });
    const whole = Buffer.concat(chunks);
    return whole.buffer.slice(whole.byteOffset, whole.byteOffset + whole.byteLength) as ArrayBuffer;
  }

  /** The whole body as text. */
  async text(): Promise<string> {
    return Buffer.from(await this.arrayBuffer()).toString("utf8");
  }

  attach(abort: (reason: Error) => void): void {
    this.#abort = abort;
  }

  push(chunk: Uint8Array): void {
    if (this.#closed) return;
    if (this.#waiting) this.#waiting.push({ kind: "data", chunk });
    else this.emit("data", chunk);
  }

  end(): void {
    if (this.#closed) return;
    if (this.#waiting) this.#waiting.push({ kind: "end" });
    else this.#finish();
  }

  fail(error: Error): void {
    if (this.#closed) return;
    if (this.#waiting) this.#waiting.push({ kind: "error", error });
    else this.#failNow(error);
  }

  #flow(): void {
    const waiting = this.#waiting;
    if (!waiting) return;
    this.#waiting = undefined;
    for (const item of waiting) {
      if (this.#closed) return;
      if (item.kind === "data") this.emit("data", item.chunk);
      else if (item.kind === "end") this.#finish();
      else this.#failNow(item.error);
    }
  }

  #failNow(error: Error): void {
    this.#closed = true;
    if (this.listenerCount("error") > 0) this.emit("error", error);
    this.emit("close");
  }

  #finish(): void {
    this.#closed = true;
    this.emit("end");
    this.emit("close");
  }
}

/**
 * Dispatches the request and resolves with the head once it comes, the body still arriving; rejects if no head
 * comes (connection error, or `signal` aborted first). `signal` aborting later fails the body with its reason.
 */
export function dispatchStreaming(
  connections: Connections,
  request: DispatchRequest,
  signal: AbortSignal | undefined,
): Promise<StreamedResponse> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const body = new DispatchedBody();
    let answered = false;
    let controller: DispatchController | undefined;
    const onAbort = () => {
      const reason = signal?.reason instanceof Error ? signal.reason : new Error("request aborted");
      if (controller) controller.abort(reason);
      else if (!answered) reject(reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    const settled = () => signal?.removeEventListener("abort", onAbort);
    const handler: DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        body.attach((reason) => started.abort(reason));
        if (signal?.aborted) started.abort(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
      },
      onResponseStart(_controller, statusCode, headers) {
        if (statusCode < 200 || answered) return;
        answered = true;
        resolve({ statusCode, headers, body });
      },
      onResponseData(_controller, chunk) {
        body.push(chunk);
      },
      onResponseEnd() {
        settled();
        // Never left pending: an end with no head before it (which no Connections should hand on) is a failure.
        if (answered) body.end();
        else reject(new Error("the answer ended before its head"));
      },
      onResponseError(_controller, error) {
        settled();
        if (answered) body.fail(error);
        else reject(error);
      },
    };
    try {
      connections.dispatch(request, handler);
    } catch (error) {
      settled();
      reject(error);
    }
  });
}
