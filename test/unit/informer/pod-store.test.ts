// Unit tests for PodStore: upsert/delete/replaceAll report only relevant changes yet always keep the newest facts.

import { expect } from "chai";
import type { PodFacts } from "../../../src/detect/facts.js";
import { podKey } from "../../../src/detect/facts.js";
import { PodStore } from "../../../src/informer/pod-store.js";
import { exited, init, namedPod as pod } from "../../support/pod-builders.js";

const keyOf = (f: PodFacts): string => podKey(f.namespace, f.name);

const listOf = (...pods: PodFacts[]): Map<string, PodFacts> => new Map(pods.map((p) => [keyOf(p), p]));

describe("informer/PodStore", () => {
  describe("empty store", () => {
    it("has size 0, no values and no entries", () => {
      const store = new PodStore();
      expect(store.size).to.equal(0);
      expect([...store.values()]).to.deep.equal([]);
      expect(store.get("shop/a")).to.equal(undefined);
    });
  });

  describe("upsert", () => {
    it("reports a new pod as a change from nothing and stores it", () => {
      const store = new PodStore();
      const a = pod("a");
      const change = store.upsert(a);
      expect(change).to.deep.equal({ key: "shop/a", previous: undefined, current: a });
      expect(change?.current).to.equal(a);
      expect(store.get("shop/a")).to.equal(a);
      expect(store.size).to.equal(1);
    });

    it("keys by namespace/name, so the same name in two namespaces is two pods", () => {
      const store = new PodStore();
      store.upsert(pod("a", { namespace: "ns1" }));
      store.upsert(pod("a", { namespace: "ns2" }));
      expect(store.size).to.equal(2);
      expect(store.get("ns1/a")?.namespace).to.equal("ns1");
      expect(store.get("ns2/a")?.namespace).to.equal("ns2");
    });

    it("returns undefined when only resourceVersion changed, but still stores the newer facts", () => {
      const store = new PodStore();
      const v1 = pod("a", { resourceVersion: "1" });
      const v2 = pod("a", { resourceVersion: "2" });
      store.upsert(v1);
      expect(store.upsert(v2)).to.equal(undefined);
      expect(store.get("shop/a")).to.equal(v2);
      expect(store.get("shop/a")?.resourceVersion).to.equal("2");
      expect(store.size).to.equal(1);
    });

    it("returns undefined for an identical (even the same object) upsert", () => {
      const store = new PodStore();
      const a = pod("a");
      store.upsert(a);
      expect(store.upsert(a)).to.equal(undefined);
      expect(store.upsert(structuredClone(a))).to.equal(undefined);
    });

    const relevant: [string, Partial<PodFacts>][] = [
      ["phase", { phase: "Running" }],
      ["uid (a replacement pod under the same name)", { uid: "uid-other" }],
      ["deleting", { deleting: true }],
      ["nodeName", { nodeName: "node-b" }],
      ["labels", { labels: { "cni-repair/broken": "true" } }],
      ["annotations", { annotations: { "sidecar.istio.io/status": "{}" } }],
      ["init containers", { initContainers: [init("istio-validation", exited(126))] }],
      ["owner", { owner: undefined }],
    ];
    for (const [what, overrides] of relevant) {
      it(`reports a change when ${what} changed, with both previous and current`, () => {
        const store = new PodStore();
        const before = pod("a", { resourceVersion: "1" });
        const after = pod("a", { resourceVersion: "2", ...overrides });
        store.upsert(before);
        const change = store.upsert(after);
        expect(change).to.not.equal(undefined);
        expect(change?.key).to.equal("shop/a");
        expect(change?.previous).to.equal(before);
        expect(change?.current).to.equal(after);
        expect(store.get("shop/a")).to.equal(after);
      });
    }

    it("reports a change even when resourceVersion did not move but a fact did", () => {
      const store = new PodStore();
      store.upsert(pod("a"));
      expect(store.upsert(pod("a", { phase: "Failed" }))?.current?.phase).to.equal("Failed");
    });
  });

  describe("delete", () => {
    it("returns the removed facts and forgets the pod", () => {
      const store = new PodStore();
      const a = pod("a");
      store.upsert(a);
      store.upsert(pod("b"));
      const change = store.remove(podKey("shop", "a"));
      expect(change).to.deep.equal({ key: "shop/a", previous: a, current: undefined });
      expect(change?.previous).to.equal(a);
      expect(store.get("shop/a")).to.equal(undefined);
      expect(store.size).to.equal(1);
    });

    it("returns undefined for an unknown pod and changes nothing", () => {
      const store = new PodStore();
      store.upsert(pod("a"));
      expect(store.remove(podKey("shop", "zzz"))).to.equal(undefined);
      expect(store.remove(podKey("other", "a"))).to.equal(undefined);
      expect(store.size).to.equal(1);
    });

    it("returns undefined the second time", () => {
      const store = new PodStore();
      store.upsert(pod("a"));
      expect(store.remove(podKey("shop", "a"))).to.not.equal(undefined);
      expect(store.remove(podKey("shop", "a"))).to.equal(undefined);
    });

    it("lets a later upsert of the same key count as new again", () => {
      const store = new PodStore();
      const a = pod("a");
      store.upsert(a);
      store.remove(podKey("shop", "a"));
      expect(store.upsert(a)).to.deep.equal({ key: "shop/a", previous: undefined, current: a });
    });
  });

  describe("replaceAll", () => {
    it("on an empty store reports every listed pod as new", () => {
      const store = new PodStore();
      const a = pod("a");
      const b = pod("b");
      const changes = store.replaceAll(listOf(a, b));
      expect(changes).to.have.deep.members([
        { key: "shop/a", previous: undefined, current: a },
        { key: "shop/b", previous: undefined, current: b },
      ]);
      expect(store.size).to.equal(2);
    });

    it("reports vanished, new and changed pods, and nothing for unchanged ones", () => {
      const store = new PodStore();
      const gone = pod("gone");
      const same = pod("same", { resourceVersion: "1" });
      const changedBefore = pod("changed", { phase: "Pending" });
      store.upsert(gone);
      store.upsert(same);
      store.upsert(changedBefore);

      const sameNewer = pod("same", { resourceVersion: "7" });
      const changedAfter = pod("changed", { phase: "Failed" });
      const fresh = pod("fresh");
      const changes = store.replaceAll(listOf(sameNewer, changedAfter, fresh));

      expect(changes).to.have.deep.members([
        { key: "shop/gone", previous: gone, current: undefined },
        { key: "shop/changed", previous: changedBefore, current: changedAfter },
        { key: "shop/fresh", previous: undefined, current: fresh },
      ]);
      expect(changes).to.have.length(3);
    });

    it("swaps in the listed facts, including newer resourceVersions of unchanged pods", () => {
      const store = new PodStore();
      store.upsert(pod("a", { resourceVersion: "1" }));
      store.upsert(pod("b"));
      const aNewer = pod("a", { resourceVersion: "9" });
      store.replaceAll(listOf(aNewer));
      expect(store.size).to.equal(1);
      expect(store.get("shop/a")).to.equal(aNewer);
      expect(store.get("shop/b")).to.equal(undefined);
      expect([...store.values()]).to.deep.equal([aNewer]);
    });

    it("with an empty list reports every pod as vanished and empties the store", () => {
      const store = new PodStore();
      const a = pod("a");
      store.upsert(a);
      expect(store.replaceAll(new Map())).to.deep.equal([{ key: "shop/a", previous: a, current: undefined }]);
      expect(store.size).to.equal(0);
    });

    it("returns no changes when the list matches the store", () => {
      const store = new PodStore();
      const a = pod("a");
      store.upsert(a);
      expect(store.replaceAll(listOf(structuredClone(a)))).to.deep.equal([]);
    });

    it("reports a replacement pod (same name, new uid) as changed, not as vanished plus new", () => {
      const store = new PodStore();
      const old = pod("a", { uid: "uid-old" });
      store.upsert(old);
      const replacement = pod("a", { uid: "uid-new" });
      expect(store.replaceAll(listOf(replacement))).to.deep.equal([
        { key: "shop/a", previous: old, current: replacement },
      ]);
    });

    it("keeps working with upsert and delete after the swap", () => {
      const store = new PodStore();
      store.replaceAll(listOf(pod("a")));
      expect(store.upsert(pod("b"))?.previous).to.equal(undefined);
      expect(store.remove(podKey("shop", "a"))?.key).to.equal("shop/a");
      expect([...store.values()].map((p) => p.name)).to.deep.equal(["b"]);
    });
  });
});
