import { expect } from "chai";
import fc from "fast-check";
import { type Query, RequestTargets } from "../../../src/kube/request-target.js";

/** What the transport built before: a WHATWG URL of the server and the path, each query value set on it. */
function byUrl(server: string, path: string, query: Query | undefined): { origin: string; target: string } {
  const url = new URL(server + path);
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== "") url.searchParams.set(key, String(value));
  }
  return { origin: url.origin, target: url.pathname + url.search };
}

const SERVERS = [
  "https://127.0.0.1:6443",
  "https://API.Example.com:443",
  "https://10.0.0.1",
  "https://[fd00::1]:6443",
  "https://rancher.example.com/k8s/clusters/c-m-4x2k",
  "http://localhost:8001",
];

describe("RequestTargets", () => {
  it("puts a proxy's path before the request's, and the query after it", () => {
    const targets = new RequestTargets("https://rancher.example.com/k8s/clusters/c-1");
    expect(targets.origin).to.equal("https://rancher.example.com");
    expect(targets.target("/api/v1/pods", { watch: true, labelSelector: "k8s-app=istio-cni-node" })).to.equal(
      "/k8s/clusters/c-1/api/v1/pods?watch=true&labelSelector=k8s-app%3Distio-cni-node",
    );
    expect(targets.pathOf("/api/v1/pods")).to.equal("/k8s/clusters/c-1/api/v1/pods");
  });

  it("leaves out undefined and empty query values, and the '?' when none is left", () => {
    const targets = new RequestTargets("https://127.0.0.1:6443");
    expect(targets.target("/api/v1/pods", { resourceVersion: "", continue: undefined })).to.equal("/api/v1/pods");
    expect(targets.target("/api/v1/pods", { limit: 500, continue: undefined })).to.equal("/api/v1/pods?limit=500");
    expect(targets.target("/api/v1/pods", undefined)).to.equal("/api/v1/pods");
  });

  it("gives what a URL of the server and the path gives, for any encoded path and any query values", () => {
    const segment = fc.string({ unit: "binary", minLength: 1, maxLength: 12 }).map(encodeURIComponent);
    const value = fc.oneof(
      fc.string({ unit: "binary", maxLength: 20 }),
      fc.integer(),
      fc.boolean(),
      fc.constant(undefined),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...SERVERS),
        fc.array(segment, { minLength: 1, maxLength: 5 }),
        fc.option(fc.dictionary(fc.stringMatching(/^[a-zA-Z]{1,12}$/), value), { nil: undefined }),
        (server, segments, query) => {
          const path = `/${segments.join("/")}`;
          const targets = new RequestTargets(server);
          const want = byUrl(server, path, query);
          expect(targets.origin).to.equal(want.origin);
          expect(targets.target(path, query)).to.equal(want.target);
        },
      ),
      { numRuns: 500 },
    );
  });
});
