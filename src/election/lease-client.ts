// Get, create and update (PUT, optimistic on resourceVersion) of one Lease; nothing else touches it.
import { ApiError } from "../kube/api-error.js";
import type { KubeTransport } from "../kube/transport.js";
import type { Lease } from "./lease-record.js";

export type LeaseTransport = Pick<KubeTransport, "request">;

type CallOptions = { readonly timeoutMs: number; readonly signal?: AbortSignal | undefined };

export class LeaseClient {
  readonly namespace: string;
  readonly name: string;
  readonly #transport: LeaseTransport;
  readonly #collection: string;

  constructor(transport: LeaseTransport, namespace: string, name: string) {
    this.#transport = transport;
    this.namespace = namespace;
    this.name = name;
    this.#collection = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  }

  /** The lease, or undefined when it does not exist. */
  async get(options: CallOptions): Promise<Lease | undefined> {
    try {
      const { body } = await this.#transport.request("get", "GET", this.#path, this.#options(options));
      return asLease(body);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return undefined;
      throw error;
    }
  }

  /** Creates the lease; 409 when someone else created it first. */
  async create(lease: Lease, options: CallOptions): Promise<Lease> {
    const { body } = await this.#transport.request("create", "POST", this.#collection, {
      ...this.#options(options),
      body: lease,
    });
    return asLease(body);
  }

  /** Replaces the lease; its metadata.resourceVersion makes this fail with 409 if anyone wrote it since. */
  async update(lease: Lease, options: CallOptions): Promise<Lease> {
    // A PUT is RBAC verb "update"; the transport's metric labels have no "update" yet, so it counts as "patch".
    const { body } = await this.#transport.request("update", "PUT", this.#path, {
      ...this.#options(options),
      body: lease,
    });
    return asLease(body);
  }

  get #path(): string {
    return `${this.#collection}/${encodeURIComponent(this.name)}`;
  }

  #options(options: CallOptions) {
    return { timeoutMs: Math.max(1, Math.round(options.timeoutMs)), ...(options.signal && { signal: options.signal }) };
  }
}

function asLease(body: unknown): Lease {
  if (typeof body !== "object" || body === null || typeof (body as Lease).metadata !== "object") {
    throw new Error("the API server answered with something that is not a Lease");
  }
  return body as Lease;
}
