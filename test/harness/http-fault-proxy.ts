// A TLS-terminating HTTP proxy between the controller and the API server that tests make misbehave at the
// HTTP level: answer 429 with Retry-After, answer 500, or hold requests back. It serves with the API server's
// own self-signed certificate and key, so a client that trusts the API server trusts the proxy too. Every
// request is logged with when it came and what it was answered, to check the client's timing afterwards.

import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Agent, createServer as createHttpsServer, type Server } from "node:https";
import { closeProxy, forwardToApiServer, listenOnLoopback } from "./api-server-forwarding.js";

export type ProxiedRequest = {
  readonly method: string;
  /** Path and query, as sent. */
  readonly url: string;
  readonly userAgent: string;
  /** When the request arrived (ms since the epoch). */
  readonly atMs: number;
};

/** What the proxy does with one request. */
export type FaultAnswer =
  | { readonly kind: "pass"; readonly delayMs?: number }
  | { readonly kind: "fail"; readonly code: number; readonly retryAfterSeconds?: number };

export type FaultRule = (request: ProxiedRequest) => FaultAnswer;

export type LoggedRequest = ProxiedRequest & {
  /** The status the client got: the injected one, the API server's, or 0 if the exchange broke. */
  status: number;
  readonly injected: boolean;
  readonly retryAfterSeconds?: number;
  /** When the client got the response head (ms since the epoch). */
  answeredAtMs?: number;
};

const PASS: FaultRule = () => ({ kind: "pass" });

const REASONS: Record<number, string> = {
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
};

export class HttpFaultProxy {
  readonly port: number;
  readonly log: LoggedRequest[] = [];
  readonly #server: Server;
  readonly #agent: Agent;
  #rule: FaultRule = PASS;

  private constructor(server: Server, port: number, agent: Agent) {
    this.#server = server;
    this.port = port;
    this.#agent = agent;
  }

  /** Listens on a free loopback port and forwards to the API server at `target`. */
  static async start(
    target: { host: string; port: number },
    files: { cert: string; key: string },
  ): Promise<HttpFaultProxy> {
    const cert = readFileSync(files.cert);
    const key = readFileSync(files.key);
    const agent = new Agent({ ca: cert, keepAlive: true });
    let proxy: HttpFaultProxy | undefined;
    const server = createHttpsServer({ cert, key }, (request, response) => {
      if (proxy) proxy.#handle(request, response, target);
    });
    proxy = new HttpFaultProxy(server, await listenOnLoopback(server), agent);
    return proxy;
  }

  /** Decides every request from now on (pass everything: `proxy.setRule()`). */
  setRule(rule: FaultRule = PASS): void {
    this.#rule = rule;
  }

  /** Closes every open connection (watches included); clients reconnect through the proxy. */
  cutAll(): void {
    this.#server.closeAllConnections();
  }

  async close(): Promise<void> {
    await closeProxy(this.#server, this.#agent);
  }

  #handle(request: IncomingMessage, response: ServerResponse, target: { host: string; port: number }): void {
    const seen: ProxiedRequest = {
      method: request.method ?? "GET",
      url: request.url ?? "/",
      userAgent: String(request.headers["user-agent"] ?? ""),
      atMs: Date.now(),
    };
    const answer = this.#rule(seen);
    if (answer.kind === "fail") {
      const entry: LoggedRequest = {
        ...seen,
        status: answer.code,
        injected: true,
        ...(answer.retryAfterSeconds !== undefined && { retryAfterSeconds: answer.retryAfterSeconds }),
      };
      this.log.push(entry);
      request.resume();
      const body = JSON.stringify({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: `injected by the test proxy: ${answer.code}`,
        reason: REASONS[answer.code] ?? "InternalError",
        code: answer.code,
      });
      response.writeHead(answer.code, {
        "content-type": "application/json",
        ...(answer.retryAfterSeconds !== undefined && { "retry-after": String(answer.retryAfterSeconds) }),
      });
      response.end(body);
      entry.answeredAtMs = Date.now();
      return;
    }
    const entry: LoggedRequest = { ...seen, status: 0, injected: false };
    this.log.push(entry);
    const forward = () =>
      forwardToApiServer(request, response, { target, agent: this.#agent }, (status) => {
        entry.status = status;
        entry.answeredAtMs = Date.now();
      });
    if (answer.delayMs !== undefined && answer.delayMs > 0) setTimeout(forward, answer.delayMs);
    else forward();
  }
}

/**
 * The identity of "the same request again": method, path and selectors. A retry of a DELETE of one pod, or
 * the reflector's next LIST/WATCH of the same pods, has the same key; another pod's DELETE does not.
 */
export function requestKey(request: ProxiedRequest): string {
  const url = new URL(request.url, "https://proxy");
  const selectors = ["labelSelector", "fieldSelector"].map((name) => url.searchParams.get(name) ?? "").join("|");
  return `${request.method} ${url.pathname} ${selectors}`;
}

export type RetryAfterReport = {
  /** Requests that came again after a Retry-After answer to the same request key: how many were checked. */
  readonly retries: number;
  /** Of those, the ones sooner than asked (with the tolerance), as "key: came X ms after a Retry-After of Y ms". */
  readonly violations: readonly string[];
};

/** Checks every request that followed a Retry-After answer to the same request key against the wait asked for. */
export function retryAfterReport(log: readonly LoggedRequest[], toleranceMs = 100): RetryAfterReport {
  const violations: string[] = [];
  let retries = 0;
  const notBefore = new Map<string, { answeredAtMs: number; askedMs: number }>();
  for (const entry of log) {
    const key = requestKey(entry);
    const asked = notBefore.get(key);
    if (asked) {
      retries++;
      notBefore.delete(key);
      const waited = entry.atMs - asked.answeredAtMs;
      if (waited < asked.askedMs - toleranceMs) {
        violations.push(`${key}: came ${waited} ms after a Retry-After of ${asked.askedMs} ms`);
      }
    }
    if (entry.retryAfterSeconds !== undefined) {
      notBefore.set(key, { answeredAtMs: entry.answeredAtMs ?? entry.atMs, askedMs: entry.retryAfterSeconds * 1000 });
    }
  }
  return { retries, violations };
}

/**
 * For a client that pauses a whole kind of request after a Retry-After (every Event write, whatever the Event):
 * requests that arrived sooner than a Retry-After answer asked, as "METHOD path: came X ms after a Retry-After of
 * Y ms". Only requests already on their way may arrive after the throttled one and before its pause ends: at most
 * `inFlight` (the client's other writers), however late a loaded machine delivers them; any more did not wait.
 */
export function pauseViolations(log: readonly LoggedRequest[], inFlight: number, toleranceMs = 100): string[] {
  const violations: string[] = [];
  for (const answer of log) {
    if (answer.retryAfterSeconds === undefined) continue;
    const answeredAtMs = answer.answeredAtMs ?? answer.atMs;
    const askedMs = answer.retryAfterSeconds * 1000;
    const early = log
      .filter((entry) => entry !== answer && entry.atMs >= answer.atMs)
      .map((entry) => ({ entry, waited: entry.atMs - answeredAtMs }))
      .filter(({ waited }) => waited < askedMs - toleranceMs);
    for (const { entry, waited } of early.slice(inFlight)) {
      violations.push(`${entry.method} ${entry.url}: came ${waited} ms after a Retry-After of ${askedMs} ms`);
    }
  }
  return violations;
}
