import { expect } from "chai";
import { collectionRequest } from "../../../src/kube/collection-path.js";

describe("collectionRequest", () => {
  const cases: [path: string, selector: string, want: { path: string; fieldSelector: string }][] = [
    ["/api/v1/pods", "", { path: "/api/v1/pods", fieldSelector: "" }],
    ["/api/v1/pods", "metadata.namespace=shop", { path: "/api/v1/namespaces/shop/pods", fieldSelector: "" }],
    ["/api/v1/pods", "metadata.namespace==shop", { path: "/api/v1/namespaces/shop/pods", fieldSelector: "" }],
    [
      "/api/v1/pods",
      "spec.nodeName=node-a,metadata.namespace=shop",
      { path: "/api/v1/namespaces/shop/pods", fieldSelector: "spec.nodeName=node-a" },
    ],
    [
      "/api/v1/pods",
      "metadata.namespace=shop,metadata.namespace=shop,status.phase!=Failed",
      { path: "/api/v1/namespaces/shop/pods", fieldSelector: "status.phase!=Failed" },
    ],
    // Exclusions stay selectors.
    [
      "/api/v1/pods",
      "metadata.namespace!=kube-system",
      { path: "/api/v1/pods", fieldSelector: "metadata.namespace!=kube-system" },
    ],
    // Two namespaces select nothing; the server answers that, not us.
    [
      "/api/v1/pods",
      "metadata.namespace=a,metadata.namespace=b",
      { path: "/api/v1/pods", fieldSelector: "metadata.namespace=a,metadata.namespace=b" },
    ],
    // Not a namespace name: left for the server to refuse with its own message.
    [
      "/api/v1/pods",
      "metadata.namespace=Bad_Name",
      { path: "/api/v1/pods", fieldSelector: "metadata.namespace=Bad_Name" },
    ],
    // Other collections are never rewritten.
    [
      "/api/v1/namespaces",
      "metadata.namespace=shop",
      { path: "/api/v1/namespaces", fieldSelector: "metadata.namespace=shop" },
    ],
  ];
  for (const [path, selector, want] of cases) {
    it(`${path} ? ${selector || "(no selector)"} → ${want.path} ? ${want.fieldSelector || "(none)"}`, () => {
      expect(collectionRequest(path, selector)).to.deep.equal(want);
    });
  }
});
