// Where a request goes on the API server: the server's origin, and the request's path under the server's own path
// (a proxy's prefix, e.g. Rancher's /k8s/clusters/<id>) with its query.
//
// Parsed once per server, not per request: a WHATWG URL and its searchParams for each request were ~3% of a small
// write's CPU. What comes out is what `new URL(server + path)` with each query value set gives.

export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export class RequestTargets {
  readonly origin: string;
  /** The server's own path; "" for the root. */
  readonly #prefix: string;

  constructor(server: string) {
    const url = new URL(server);
    this.origin = url.origin;
    this.#prefix = url.pathname === "/" ? "" : url.pathname;
  }

  /** The path the server sees, without the query (for messages). */
  pathOf(path: string): string {
    return this.#prefix + path;
  }

  /** The request's path and query (HTTP/2's :path); undefined and empty values are left out. */
  target(path: string, query: Query | undefined): string {
    if (query === undefined) return this.#prefix + path;
    const params = new URLSearchParams();
    for (const key in query) {
      const value = query[key];
      if (value !== undefined && value !== "") params.set(key, String(value));
    }
    const search = params.toString();
    return search === "" ? this.#prefix + path : `${this.#prefix}${path}?${search}`;
  }
}
