// A minimal API client for the bench's own traffic: one pooled TLS agent, raw JSON, a user agent per role.
import { Agent, fetch } from "undici";

export type ClusterAccess = { readonly server: string; readonly caPem: string; readonly token: string };

export class ApiStatusError extends Error {
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

export class BenchClient {
  readonly #access: ClusterAccess;
  readonly #agent: Agent;
  readonly #userAgent: string;

  constructor(access: ClusterAccess, userAgent: string, connections = 64) {
    this.#access = access;
    this.#userAgent = userAgent;
    this.#agent = new Agent({ connect: { ca: access.caPem }, connections, pipelining: 1 });
  }

  /** A JSON request; non-2xx answers throw ApiStatusError. */
  async request(method: string, path: string, body?: unknown, contentType = "application/json"): Promise<unknown> {
    const response = await fetch(this.#access.server + path, {
      method,
      dispatcher: this.#agent,
      headers: {
        authorization: `Bearer ${this.#access.token}`,
        accept: "application/json",
        "user-agent": this.#userAgent,
        ...(body !== undefined && { "content-type": contentType }),
      },
      body: body === undefined ? null : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status < 200 || response.status >= 300) {
      throw new ApiStatusError(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`, response.status);
    }
    return text.length > 0 ? JSON.parse(text) : undefined;
  }

  /** A GET whose answer is text (the API server's /metrics); non-2xx answers throw ApiStatusError. */
  async text(path: string): Promise<string> {
    const response = await fetch(this.#access.server + path, {
      dispatcher: this.#agent,
      headers: { authorization: `Bearer ${this.#access.token}`, "user-agent": this.#userAgent },
    });
    const text = await response.text();
    if (response.status !== 200)
      throw new ApiStatusError(`GET ${path}: ${response.status} ${text.slice(0, 300)}`, response.status);
    return text;
  }

  /** Same as request, but 404 (and 409 when asked) are not errors; returns whether it succeeded. */
  async tolerant(method: string, path: string, body?: unknown, also409 = false): Promise<boolean> {
    try {
      await this.request(method, path, body);
      return true;
    } catch (error) {
      if (error instanceof ApiStatusError && (error.status === 404 || (also409 && error.status === 409))) return false;
      throw error;
    }
  }

  /** A streaming GET (a watch): the body's bytes until the server ends it or `signal` aborts. */
  async stream(path: string, signal: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    const response = await fetch(this.#access.server + path, {
      dispatcher: this.#agent,
      headers: { authorization: `Bearer ${this.#access.token}`, "user-agent": this.#userAgent },
      signal,
    });
    if (response.status !== 200 || !response.body) {
      throw new ApiStatusError(
        `GET ${path}: ${response.status} ${(await response.text()).slice(0, 300)}`,
        response.status,
      );
    }
    return response.body;
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}

export const podsPath = (namespace: string): string => `/api/v1/namespaces/${namespace}/pods`;
export const podPath = (namespace: string, name: string): string => `${podsPath(namespace)}/${name}`;

/** Runs `work(i)` for i in [0, count) with at most `concurrency` in flight; stops at the first error. */
export async function inParallel(
  count: number,
  concurrency: number,
  work: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}
