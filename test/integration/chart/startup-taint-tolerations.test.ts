// The chart's workload tolerates the startup taints it manages, in every mode (the Deployment as well as the
// per-node DaemonSet): judged as the scheduler matches a toleration to a taint, for the values nodes are registered
// with ("" by a kubelet, "true" by GKE and AKS), on top of the tolerations value, and without duplicating one that
// already covers the key.
import type { V1Taint, V1Toleration } from "@kubernetes/client-node";
import { expect } from "chai";
import { renderChart } from "../../harness/helm.js";
import { OVERLAYS, workloadOf } from "../../harness/overlays.js";

const ISTIO = "cni.istio.io/not-ready";
const LINKERD = "cni-repair.io/agent-not-ready";
const BOTH_PRESETS = { presets: "{istio,linkerd}" };

/** The scheduler's rule (k8s.io/api/core/v1 Toleration.ToleratesTaint). */
function tolerates(toleration: V1Toleration, taint: V1Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  if (toleration.operator === "Exists") return true;
  return !toleration.key ? false : (toleration.value ?? "") === (taint.value ?? "");
}

const tolerationsOf = async (mode: (typeof OVERLAYS)[number], values: Record<string, string>) =>
  workloadOf(await renderChart(mode, values)).spec?.template.spec?.tolerations ?? [];

describe("chart: the workload tolerates the startup taints it manages", function () {
  // The first call may build helm (cached afterwards).
  this.timeout(20 * 60_000);

  for (const mode of OVERLAYS) {
    it(`${mode}: each managed key, NoSchedule, whatever its value`, async () => {
      const tolerations = await tolerationsOf(mode, { ...BOTH_PRESETS, "startupTaint.mode": "bootstrap-only" });
      for (const key of [ISTIO, LINKERD]) {
        for (const value of ["", "true"]) {
          const taint = { key, value, effect: "NoSchedule" };
          expect(
            tolerations.some((t) => tolerates(t, taint)),
            `${mode} tolerates ${key}=${value}:NoSchedule`,
          ).to.equal(true);
        }
      }
    });
  }

  it("the Deployment tolerates nothing while startup taints are not managed (as before)", async () => {
    expect(await tolerationsOf("cluster", BOTH_PRESETS)).to.deep.equal([]);
  });

  it("adds the keys to the tolerations value, and none that a toleration there already covers", async () => {
    const dedicated = { key: "dedicated", operator: "Equal", value: "infra", effect: "NoSchedule" };
    const given = {
      "tolerations[0].key": dedicated.key,
      "tolerations[0].operator": dedicated.operator,
      "tolerations[0].value": dedicated.value,
      "tolerations[0].effect": dedicated.effect,
      "tolerations[1].key": LINKERD,
      "tolerations[1].operator": "Exists",
    };
    expect(
      await tolerationsOf("cluster", { ...BOTH_PRESETS, ...given, "startupTaint.mode": "continuous" }),
    ).to.deep.equal([
      dedicated,
      { key: LINKERD, operator: "Exists" },
      { key: ISTIO, operator: "Exists", effect: "NoSchedule" },
    ]);
    // The DaemonSet's default (every taint) covers both: nothing added.
    expect(await tolerationsOf("per-node", { ...BOTH_PRESETS, "startupTaint.mode": "bootstrap-only" })).to.deep.equal([
      { operator: "Exists" },
    ]);
  });
});
