import { expect } from "chai";
import { describeFieldSelector, fieldSelector, liftNamespace, type Scope } from "../../../src/config/selectors.js";
import { type Collection, collectionRequest } from "../../../src/kube/collection-path.js";

describe("collectionRequest", () => {
  const cases: [collection: Collection, scope: Scope, want: { path: string; query: Record<string, string> }][] = [
    ["pods", {}, { path: "/api/v1/pods", query: {} }],
    ["pods", { namespace: "shop" }, { path: "/api/v1/namespaces/shop/pods", query: {} }],
    [
      "pods",
      { namespace: "shop", fieldSelector: "spec.nodeName=node-a" },
      { path: "/api/v1/namespaces/shop/pods", query: { fieldSelector: "spec.nodeName=node-a" } },
    ],
    [
      "pods",
      { fieldSelector: "metadata.namespace!=kube-system", labelSelector: "app=x" },
      { path: "/api/v1/pods", query: { fieldSelector: "metadata.namespace!=kube-system", labelSelector: "app=x" } },
    ],
    // Namespaces are not namespaced: a scope's namespace never turns into a path there.
    ["namespaces", { namespace: "shop" }, { path: "/api/v1/namespaces", query: {} }],
    // Istio's repair settings: one object by name in one namespace, core and apps/v1.
    [
      "configmaps",
      { namespace: "istio-system", fieldSelector: "metadata.name=istio-cni-config" },
      {
        path: "/api/v1/namespaces/istio-system/configmaps",
        query: { fieldSelector: "metadata.name=istio-cni-config" },
      },
    ],
    [
      "daemonsets",
      { namespace: "istio-system" },
      { path: "/apis/apps/v1/namespaces/istio-system/daemonsets", query: {} },
    ],
  ];
  for (const [collection, scope, want] of cases) {
    it(`${collection} in ${JSON.stringify(scope)} → ${want.path} ${JSON.stringify(want.query)}`, () => {
      expect(collectionRequest(collection, scope)).to.deep.equal(want);
    });
  }
});

describe("field selectors are written in one place", () => {
  it("escapes the values of the terms it adds, not what was written already", () => {
    expect(fieldSelector(["status.phase!=Failed"], [["spec.nodeName", "=", "a,b=c\\"]])).to.equal(
      "status.phase!=Failed,spec.nodeName=a\\,b\\=c\\\\",
    );
    expect(fieldSelector([""], [])).to.equal(undefined);
  });

  it("describes a scope as the field selector it amounts to", () => {
    expect(describeFieldSelector({ namespace: "shop", fieldSelector: "spec.nodeName=n1" })).to.equal(
      "spec.nodeName=n1,metadata.namespace=shop",
    );
    expect(describeFieldSelector({})).to.equal("");
  });

  // The cases the API server's continue-token bug needs: a user's selector pinning one namespace lists that
  // namespace's collection; anything else stays as written for the server to judge.
  const lifts: [selector: string, want: { namespace?: string; rest: string }][] = [
    ["", { rest: "" }],
    ["metadata.namespace=shop", { namespace: "shop", rest: "" }],
    ["metadata.namespace==shop", { namespace: "shop", rest: "" }],
    ["spec.nodeName=node-a,metadata.namespace=shop", { namespace: "shop", rest: "spec.nodeName=node-a" }],
    [
      "metadata.namespace=shop,metadata.namespace=shop,status.phase!=Failed",
      { namespace: "shop", rest: "status.phase!=Failed" },
    ],
    ["metadata.namespace!=kube-system", { rest: "metadata.namespace!=kube-system" }],
    ["metadata.namespace=a,metadata.namespace=b", { rest: "metadata.namespace=a,metadata.namespace=b" }],
    ["metadata.namespace=Bad_Name", { rest: "metadata.namespace=Bad_Name" }],
  ];
  for (const [selector, want] of lifts) {
    it(`--field-selector ${selector || "(none)"} → ${JSON.stringify(want)}`, () => {
      expect(liftNamespace(selector)).to.deep.equal(want);
    });
  }
});
