// An in-memory Lease endpoint with resourceVersion conflicts, outages and hangs, on the fake clock.
import type { Lease, LeaseSpec } from "../../../src/election/lease-record.js";
import { ApiError } from "../../../src/kube/api-error.js";
import type { ApiResponse, RequestOptions, Verb } from "../../../src/kube/transport.js";
import type { FakeClock } from "../fake-clock.js";

export const NAMESPACE = "cni-repair";
export const NAME = "cni-repair-leader";
const COLLECTION = `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases`;
const ITEM = `${COLLECTION}/${NAME}`;

/** ok: answers; down: no answer (status 0) at once; hang: answers only by timing out or on abort. */
export type FakeMode = "ok" | "down" | "hang";

export type FakeConnection = {
  mode: FakeMode;
  request(verb: Verb, method: string, path: string, options?: RequestOptions): Promise<ApiResponse>;
};

export class FakeLeaseApi {
  mode: FakeMode = "ok";
  /**
   * How long an answer takes on the fake clock (0: at once). A request whose timeoutMs is shorter fails with no
   * response, as the real transport's does.
   */
  latencyMs = 0;
  readonly calls: string[] = [];
  #lease: Lease | undefined;
  #version = 0;
  readonly #clock: FakeClock;

  constructor(clock: FakeClock) {
    this.#clock = clock;
  }

  get lease(): Lease | undefined {
    return this.#lease === undefined ? undefined : structuredClone(this.#lease);
  }

  get spec(): LeaseSpec {
    return this.#lease?.spec ?? {};
  }

  /** Another elector (or kubectl) writes the lease. */
  write(spec: LeaseSpec): void {
    this.#lease = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { namespace: NAMESPACE, name: NAME, resourceVersion: String(++this.#version) },
      spec: structuredClone(spec),
    };
  }

  /** Count of calls by method, e.g. count("PUT"). */
  count(method: string): number {
    return this.calls.filter((call) => call === method).length;
  }

  async request(verb: Verb, method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    return await this.#serve(this.mode, verb, method, path, options);
  }

  /** A client of its own, whose mode breaks only its own requests (another elector's network). */
  connect(): FakeConnection {
    const connection: FakeConnection = {
      mode: "ok",
      request: (verb, method, path, options = {}) => this.#serve(connection.mode, verb, method, path, options),
    };
    return connection;
  }

  async #serve(
    mode: FakeMode,
    _verb: Verb,
    method: string,
    path: string,
    options: RequestOptions,
  ): Promise<ApiResponse> {
    this.calls.push(method);
    if (mode === "down") throw new ApiError(`${method} ${path}: no response`, { status: 0 });
    if (mode === "hang") return await this.#hang(method, path, options);
    if (this.latencyMs > 0) await this.#travel(method, path, options);
    return this.#answer(method, path, options.body as Lease | undefined);
  }

  /** Resolves after latencyMs, or fails like #hang if the request's timeout or signal comes first. */
  #travel(method: string, path: string, options: RequestOptions): Promise<void> {
    if ((options.timeoutMs ?? Number.POSITIVE_INFINITY) <= this.latencyMs) return this.#hang(method, path, options);
    return new Promise((resolve) => this.#clock.setTimeout(resolve, this.latencyMs));
  }

  #answer(method: string, path: string, body: Lease | undefined): ApiResponse {
    if (method === "GET" && path === ITEM) {
      if (!this.#lease) throw new ApiError("not found", { status: 404, reason: "NotFound" });
      return { status: 200, body: this.lease };
    }
    if (method === "POST" && path === COLLECTION && body) {
      if (this.#lease) throw new ApiError("exists", { status: 409, reason: "AlreadyExists" });
      this.write(body.spec ?? {});
      return { status: 201, body: this.lease };
    }
    if (method === "PUT" && path === ITEM && body) {
      if (!this.#lease) throw new ApiError("not found", { status: 404, reason: "NotFound" });
      if (body.metadata.resourceVersion !== this.#lease.metadata.resourceVersion) {
        throw new ApiError("conflict", { status: 409, reason: "Conflict" });
      }
      this.write(body.spec ?? {});
      return { status: 200, body: this.lease };
    }
    throw new Error(`unexpected ${method} ${path}`);
  }

  #hang(method: string, path: string, options: RequestOptions): Promise<never> {
    return new Promise((_, reject) => {
      const fail = (error: Error) => {
        if (timer) this.#clock.clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
        reject(error);
      };
      const onAbort = () => fail(new DOMException("aborted", "AbortError"));
      const timer =
        options.timeoutMs === undefined
          ? undefined
          : this.#clock.setTimeout(
              () => fail(new ApiError(`${method} ${path}: timeout`, { status: 0 })),
              options.timeoutMs,
            );
      options.signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}
