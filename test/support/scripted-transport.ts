// The one KubeTransport of the unit tests: it answers from a script, at the seam between our code and the API
// server. Each request and stream is recorded, and answered by the test's function (a body, or an ApiError thrown).
import { Readable } from "node:stream";
import { ApiError } from "../../src/kube/api-error.js";
import type { KubeTransport } from "../../src/kube/transport.js";

export type ScriptedCall = {
  /** A request (list, get, delete, ...) or a stream (watch). */
  readonly kind: "request" | "watch";
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly body: unknown;
  /** The Accept header asked for (undefined: plain JSON). */
  readonly accept: string | undefined;
  readonly atMs: number;
};

/** What one request gets: a JSON body, protobuf bytes, or an API error status (with Retry-After seconds). */
export type ScriptedAnswer =
  | { readonly body: unknown }
  | { readonly protobuf: Buffer }
  | { readonly status: number; readonly retryAfterSeconds?: number };

/**
 * What one watch gets: lines of events (or protobuf frames), then the end (or, with `hang`, silence until aborted).
 */
export type ScriptedWatch =
  | { readonly events: readonly unknown[]; readonly hang?: boolean }
  | { readonly frames: readonly Buffer[]; readonly hang?: boolean }
  | { readonly status: number; readonly retryAfterSeconds?: number };

const PROTOBUF = "application/vnd.kubernetes.protobuf";

type RequestOptions = { query?: ScriptedCall["query"]; body?: unknown; accept?: string };

export type Script = {
  /** May answer later (a promise), for tests that look at requests in flight at once. */
  request?: (call: ScriptedCall) => ScriptedAnswer | Promise<ScriptedAnswer>;
  watch?: (call: ScriptedCall) => ScriptedWatch;
};

export function apiError(status: number, retryAfterSeconds?: number): ApiError {
  return new ApiError(`scripted ${status}`, {
    status,
    ...(retryAfterSeconds !== undefined && { retryAfterMs: retryAfterSeconds * 1000 }),
  });
}

export function scriptedTransport(script: Script): { transport: KubeTransport; calls: ScriptedCall[] } {
  const calls: ScriptedCall[] = [];
  const record = (
    kind: ScriptedCall["kind"],
    method: string,
    path: string,
    options: { query?: ScriptedCall["query"]; body?: unknown; accept?: string },
  ) => {
    const call = {
      kind,
      method,
      path,
      query: options.query ?? {},
      body: options.body,
      accept: options.accept,
      atMs: performance.now(),
    };
    calls.push(call);
    return call;
  };
  /** The script's answer to a request; an error status thrown as the ApiError the transport would throw. */
  const answerTo = async (method: string, path: string, options: RequestOptions) => {
    const answer = await (script.request ?? (() => ({ body: {} })))(record("request", method, path, options));
    if ("status" in answer) throw apiError(answer.status, answer.retryAfterSeconds);
    return answer;
  };
  const transport = {
    server: "https://scripted",
    credentialsRejected: false,
    request: async (_verb: string, method: string, path: string, options: RequestOptions = {}) => {
      const answer = await answerTo(method, path, options);
      if ("protobuf" in answer) throw new Error(`scripted protobuf answer to a JSON request: ${method} ${path}`);
      return { status: 200, body: answer.body };
    },
    requestBytes: async (_verb: string, method: string, path: string, options: RequestOptions = {}) => {
      const answer = await answerTo(method, path, options);
      if ("protobuf" in answer) return { status: 200, contentType: PROTOBUF, bytes: answer.protobuf };
      return { status: 200, contentType: "application/json", bytes: Buffer.from(JSON.stringify(answer.body)) };
    },
    stream: async (path: string, options: { query?: ScriptedCall["query"]; signal?: AbortSignal; accept?: string }) => {
      const answer = (script.watch ?? (() => ({ events: [], hang: true })))(record("watch", "GET", path, options));
      if ("status" in answer) throw apiError(answer.status, answer.retryAfterSeconds);
      const bytes =
        "frames" in answer
          ? Buffer.concat(answer.frames)
          : Buffer.from(answer.events.map((event) => `${JSON.stringify(event)}\n`).join(""));
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => {
          if (bytes.length > 0) controller.enqueue(new Uint8Array(bytes));
          if (!answer.hang) controller.close();
          else options.signal?.addEventListener("abort", () => controller.error(new Error("aborted")), { once: true });
        },
      });
      const contentType = "frames" in answer ? `${PROTOBUF};stream=watch` : "application/json";
      return { status: 200, contentType, body: Readable.fromWeb(body) };
    },
  };
  return { transport: transport as unknown as KubeTransport, calls };
}
