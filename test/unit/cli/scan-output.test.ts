// scan's words: the scope it looked in and the count checked, the action run takes (a bare pod in delete mode is
// labelled, not just held), and the result after --repair with its status code.
import { expect } from "chai";
import { describeScope, renderScan, scanCounts } from "../../../src/cli/scan-output.js";
import type { ScanRecord } from "../../../src/cli/scan-record.js";
import { actionOf } from "../../../src/safety/policy.js";

const record = (overrides: Partial<ScanRecord>): ScanRecord => ({
  namespace: "shop",
  name: "cart-1",
  uid: "u1",
  node: "n1",
  owner: { kind: "ReplicaSet", name: "cart" },
  rule: "istio",
  container: "istio-validation",
  exitCode: 126,
  where: "lastState",
  verdict: "broken",
  reason: "istio-validation exited 126 (lastState)",
  action: "delete",
  hold: null,
  skip: null,
  fallback: null,
  result: null,
  ...overrides,
});
const everywhere = { namespaces: [], excludeNamespaces: [], labelSelector: "", fieldSelector: "" };

describe("scan output", () => {
  it("names the action run takes: the mode's action, label for a bare pod held from delete, hold, skip, none", () => {
    expect(actionOf({ kind: "act", action: "delete" })).to.equal("delete");
    expect(actionOf({ kind: "hold", reason: "bare_pod", detail: "d", label: true })).to.equal("label");
    expect(actionOf({ kind: "hold", reason: "bare_pod", detail: "d", label: false })).to.equal("hold");
    expect(actionOf({ kind: "hold", reason: "storm", detail: "d" })).to.equal("hold");
    expect(actionOf({ kind: "skip", reason: "already labelled" })).to.equal("skip");
    expect(actionOf({ kind: "healthy" })).to.equal("none");
  });

  it("describes the scope it looked in", () => {
    expect(describeScope(everywhere)).to.equal("all namespaces");
    expect(
      describeScope({
        namespaces: ["a", "b"],
        excludeNamespaces: ["kube-system"],
        labelSelector: "app=x",
        fieldSelector: "spec.nodeName=n1",
      }),
    ).to.equal("namespaces a, b, excluding kube-system, label selector app=x, field selector spec.nodeName=n1");
  });

  it("always says how many pods it checked, broken or not", () => {
    const none = { scope: { ...everywhere, namespaces: ["gone"] }, counts: scanCounts(0, []), pods: [] };
    expect(renderScan(none, "table")).to.equal("0 pods checked (namespace gone), 0 broken.\n");
    const pods = [record({}), record({ name: "cart-2", action: "hold", hold: { reason: "storm", detail: "3 of 4" } })];
    const some = { scope: everywhere, counts: scanCounts(12, pods), pods };
    expect(some.counts).to.deep.equal({ checked: 12, broken: 2, byAction: { delete: 1, hold: 1 } });
    const text = renderScan(some, "table");
    expect(text).to.match(/cart-2 .* hold: storm \(3 of 4\)\n12 pods checked \(all namespaces\), 2 broken\.\n$/);
    expect(JSON.parse(renderScan(some, "json"))).to.deep.equal(some);
  });

  it("after --repair shows results with the status code, not plans", () => {
    const refused = record({
      result: { type: "delete", result: "fail", status: 403, detail: "forbidden" },
    });
    const text = renderScan({ scope: everywhere, counts: scanCounts(1, [refused]), pods: [refused] }, "table");
    expect(text.split("\n")[0]).to.match(/RESULT$/);
    expect(text).to.include("delete fail 403 (forbidden)");
  });

  it("says what it read of Istio's repair, and a delete that is Istio's fallback", () => {
    const fallback =
      "Istio's in-place repair did not fix it: the validator failed again at T, the CNI agent Ready since T0";
    const out = renderScan(
      {
        scope: everywhere,
        counts: scanCounts(1, [record({ fallback })]),
        pods: [record({ fallback })],
        istioRepair: "in_place (ConfigMap istio-system/istio-cni-config: …)",
      },
      "table",
    );
    expect(out.split("\n")[0]).to.equal("Istio's repair: in_place (ConfigMap istio-system/istio-cni-config: …).");
    expect(out).to.include(`delete (Istio's fallback: ${fallback})`);
  });
});
