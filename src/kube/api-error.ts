// A failed Kubernetes API call: HTTP status (0 when the server was not reached), Status reason, Retry-After.

export class ApiError extends Error {
  readonly code = "ERR_KUBE_API";
  /** HTTP status, or 0 when no response came back (connection refused, reset, timeout). */
  readonly status: number;
  /** The Status object's reason (e.g. "Conflict", "Expired", "Forbidden"), when the server sent one. */
  readonly reason: string | undefined;
  /** From the Retry-After header (429, 503, some 5xx), in milliseconds. */
  readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    options: { status: number; reason?: string | undefined; retryAfterMs?: number | undefined; cause?: unknown },
  ) {
    super(message, { cause: options.cause });
    this.name = "ApiError";
    this.status = options.status;
    this.reason = options.reason;
    this.retryAfterMs = options.retryAfterMs;
  }

  /**
   * The server asked us to slow down rather than failed: 429 (API Priority and Fairness, max-in-flight), or 503
   * with Retry-After (an overloaded or restarting server). Not a failure of the call; retry after `retryAfterMs`.
   */
  get throttled(): boolean {
    return this.status === 429 || (this.status === 503 && this.retryAfterMs !== undefined);
  }

  /** The label value for cni_repair_api_requests_total{code}. */
  get codeLabel(): string {
    return this.status === 0 ? "error" : String(this.status);
  }
}

/** A server asking for a longer pause than this is capped: the controller must come back eventually. */
export const MAX_RETRY_AFTER_MS = 10 * 60_000;

/** Parses Retry-After: delta-seconds or an HTTP date, capped. Undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed) * 1000, MAX_RETRY_AFTER_MS);
  // An HTTP date names its zone (GMT); Date.parse alone would read "1.5" as a date in 2001.
  if (!/GMT$/.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.min(Math.max(0, date - now), MAX_RETRY_AFTER_MS);
}

/** Builds an ApiError from a non-2xx response body (a Status object when the API server wrote it). */
export function apiErrorFromResponse(
  what: string,
  status: number,
  bodyText: string,
  retryAfter: string | null,
): ApiError {
  let reason: string | undefined;
  let message = bodyText.slice(0, 300);
  try {
    const body = JSON.parse(bodyText) as { reason?: unknown; message?: unknown };
    if (typeof body.reason === "string") reason = body.reason;
    if (typeof body.message === "string") message = body.message;
  } catch {
    // Not JSON (a proxy's error page): keep the start of the text.
  }
  return new ApiError(`${what}: ${status}${reason ? ` ${reason}` : ""}: ${message}`, {
    status,
    reason,
    retryAfterMs: parseRetryAfter(retryAfter),
  });
}

/** A watch ERROR event carries a Status object; 410 Gone means the resourceVersion is too old. */
export function watchErrorEvent(object: unknown): ApiError {
  const status = (object ?? {}) as { code?: unknown; reason?: unknown; message?: unknown };
  const code = typeof status.code === "number" ? status.code : 500;
  const message = typeof status.message === "string" ? status.message : "watch error";
  return new ApiError(`watch ERROR event: ${code}: ${message}`, {
    status: code,
    reason: typeof status.reason === "string" ? status.reason : undefined,
  });
}
