// explain's text: each part of the judgement on its own labelled line, holds with their reason and until when.
import { expect } from "chai";
import type { Explanation } from "../../../src/cli/explain.js";
import { renderExplanation } from "../../../src/cli/explain-output.js";

const held = {
  action: "hold",
  hold: {
    reason: "cni_agent_not_ready",
    detail: "the CNI agent on node n1 has been Ready for 2 s of the 10 s required",
    until: "2026-12-03T18:00:08.000Z",
  },
  skip: null,
};
const explanation: Explanation = {
  pod: {
    namespace: "shop",
    name: "cart-1",
    uid: "u1",
    node: "n1",
    phase: "Pending",
    owner: { kind: "ReplicaSet", name: "cart" },
    staticPod: false,
    deleting: false,
  },
  scope: { watched: true, detail: "run watches this pod" },
  rule: { name: "istio", detail: "carries the mesh's marker; validator init container istio-validation" },
  validator: {
    container: "istio-validation",
    state: "waiting",
    lastState: {
      exitCode: 126,
      reason: "Error",
      startedAt: "2026-12-03T17:59:45.000Z",
      finishedAt: "2026-12-03T17:59:50.000Z",
    },
    restartCount: 3,
  },
  istioRepair:
    "in_place (ConfigMap istio-system/istio-cni-config: REPAIR_ENABLED=true, REPAIR_REPAIR_PODS=true, REPAIR_DELETE_PODS=false, REPAIR_LABEL_PODS=false)",
  verdict: { broken: true, reason: "istio-validation exited 126 (lastState)", terminal: false },
  agents: [
    {
      what: "CNI agent",
      node: "n1",
      pod: "kube-system/istio-cni-node-x",
      ready: true,
      readySince: "2026-12-03T17:00:00.000Z",
      seenReadySince: "2026-12-03T18:00:00.000Z",
      minReadySeconds: 10,
    },
  ],
  storm: { node: "1 of 3 meshed pods broken on node n1", cluster: "1 of 9 meshed pods broken in the cluster" },
  guards: { agent: { reason: "cni_agent_not_ready", waitMs: 8_000, detail: held.hold.detail } },
  mode: "delete",
  decision: held,
  modes: { delete: held, label: { action: "label", hold: null, skip: null }, report: held },
};

describe("explain output", () => {
  it("prints the judgement line by line", () => {
    const lines = renderExplanation(explanation, "table").trimEnd().split("\n");
    expect(lines).to.include(
      "Validator:  istio-validation: state waiting; last state terminated, exit 126 (Error) at 2026-12-03T17:59:50.000Z; restarts 3",
    );
    expect(lines).to.include(`Istio:      repair ${explanation.istioRepair}`);
    expect(lines).to.include("Verdict:    broken: istio-validation exited 126 (lastState)");
    expect(lines).to.include(
      "Agent:      CNI agent kube-system/istio-cni-node-x: Ready since 2026-12-03T17:00:00.000Z (seen Ready since 2026-12-03T18:00:00.000Z); 10 s required",
    );
    expect(lines).to.include(
      "Now (delete): hold: cni_agent_not_ready until 2026-12-03T18:00:08.000Z (the CNI agent on node n1 has been Ready for 2 s of the 10 s required)",
    );
    expect(lines).to.include("  in label mode: label");
  });

  it("names a hold for Istio's in-place repair and a delete as its fallback", () => {
    const pending = {
      reason: "mesh_repair_pending" as const,
      detail: "Istio may still repair it in place: the validator last failed at 2026-12-03T17:59:50.000Z, …",
    };
    const fallback = { basis: "failed_again" as const, detail: "Istio's in-place repair did not fix it: …" };
    const heldForIstio = { action: "hold", hold: { ...pending, until: null }, skip: null };
    const lines = renderExplanation(
      { ...explanation, guards: { meshRepair: pending }, decision: heldForIstio },
      "table",
    ).split("\n");
    expect(lines).to.include(`Guard:      meshRepair: ${pending.detail}`);
    expect(lines).to.include(`Now (delete): hold: mesh_repair_pending (${pending.detail})`);
    const fell = renderExplanation({ ...explanation, guards: { meshFallback: fallback } }, "table").split("\n");
    expect(fell).to.include(`Guard:      meshFallback: ${fallback.detail}`);
  });

  it("prints the same object as JSON with -o json", () => {
    expect(JSON.parse(renderExplanation(explanation, "json"))).to.deep.equal(explanation);
  });
});
