// A request answered whole: its head and every body byte gathered in the dispatch callbacks (dispatch.ts), one
// promise for the lot. Why not undici's request() (which the transport used before): it wraps each answer in a Readable body (its push, 'data' and 'end' ticks)
// and each request in an abort-signal listener, and the caller's timeout needs an AbortSignal.timeout and an
// AbortSignal.any of its own; under the per-node instance's baseline-only compiler that was a quarter of a small
// request's CPU (bench/README.md), and a DELETE's CPU is repair latency. One timer and the caller's signal do here.
import type { IncomingHttpHeaders } from "node:http";
import type { Connections, DispatchController, DispatchHandler, DispatchRequest } from "./dispatch.js";

export type WholeResponse = {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  readonly bytes: Buffer;
};

export type Deadline = {
  /** The caller's cancel: the request is aborted with its reason. */
  readonly signal?: AbortSignal | undefined;
  /** From the dispatch to the body's last byte. */
  readonly timeoutMs: number;
};

/** What an AbortSignal.timeout rejects with, so a timed-out request reads the same as before. */
const timedOut = (): Error => new DOMException("The operation was aborted due to timeout", "TimeoutError");

const reasonOf = (signal: AbortSignal): Error =>
  signal.reason instanceof Error ? signal.reason : new Error("request aborted");

/**
 * Dispatches the request and resolves with its whole answer (any status: the caller judges it); rejects when no
 * answer comes whole (connection error, the deadline passed, or the caller's signal aborted).
 */
export function dispatchWhole(
  connections: Connections,
  request: DispatchRequest,
  deadline: Deadline,
): Promise<WholeResponse> {
  const { signal } = deadline;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(reasonOf(signal));
      return;
    }
    let controller: DispatchController | undefined;
    /** Aborted before the request started: it is aborted as it starts, so nothing is sent late. */
    let abortedEarly: Error | undefined;
    let settled = false;
    let statusCode = 0;
    let headers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    const abort = (reason: Error) => {
      if (controller) {
        controller.abort(reason);
        return;
      }
      abortedEarly = reason;
      settle(reason);
    };
    const onAbort = () => abort(reasonOf(signal as AbortSignal));
    const timer = setTimeout(() => abort(timedOut()), deadline.timeoutMs);
    timer.unref();
    signal?.addEventListener("abort", onAbort, { once: true });
    function settle(error: Error | undefined, answer?: WholeResponse): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      if (answer) resolve(answer);
      else reject(error);
    }
    const handler: DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        // A DELETE whose caller gave up while it waited for a connection must not go out afterwards.
        if (abortedEarly) started.abort(abortedEarly);
      },
      onResponseStart(_controller, code, responseHeaders) {
        // 1xx heads are interim; the answer is the final one.
        if (code < 200) return;
        statusCode = code;
        headers = responseHeaders;
      },
      onResponseData(_controller, chunk) {
        chunks.push(chunk);
      },
      onResponseEnd() {
        const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
        settle(undefined, { statusCode, headers, bytes });
      },
      onResponseError(_controller, error) {
        settle(error);
      },
    };
    try {
      connections.dispatch(request, handler);
    } catch (error) {
      settle(error instanceof Error ? error : new Error(String(error)));
    }
  });
}
