// The startup check knows the install's admission policies: run in-cluster from the per-node overlay (its token
// bound to its pod on the node), it reads them with the permissions the overlay grants and says they are in force;
// with a binding deleted it warns, naming the policy and what is missing, and runs on all the same.
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { createCniAgent } from "../../harness/cni-agents.js";
import { kubectl } from "../../harness/kubectl.js";
import { inClusterRuns } from "../../harness/mode-scenarios.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controllerContainer, installOverlay, type Rendered, uninstall } from "../../harness/overlays.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

describe("manifests: the startup check of the admission policies", function () {
  this.timeout(120_000);
  let rendered: Rendered;
  let namespace: string;
  const runs = inClusterRuns();

  before(async () => {
    const plane = controlPlane();
    ({ rendered } = await installOverlay(plane, "per-node"));
    const api = plane.kubeConfig().makeApiClient(CoreV1Api);
    namespace = await createTestNamespace(api, "as");
    await createCniAgent(api, { namespace, mesh: "istio", nodeName: `${namespace}-a`, readySince: new Date(0) });
  });

  after(async () => {
    await uninstall(controlPlane());
  });

  const start = async (podName: string, checked: "checked" | "warned") =>
    await runs.start(
      controlPlane(),
      controllerContainer(rendered),
      { nodeName: `${namespace}-a`, podName },
      namespace,
      {
        admissionPolicies: checked,
      },
    );

  it("installed: one line naming both policies, no warning", async () => {
    const run = await start("cni-repair-as-0", "checked");
    const [checked] = run.controller.logsWith("admission policies checked");
    expect(checked?.policies).to.deep.equal(["cni-repair-meshed-pods", "cni-repair-own-node"]);
    expect(run.controller.logs.filter((line) => line.level === "warn")).to.deep.equal([]);
  });

  it("a binding missing: a warning naming the policy and what is missing; the controller runs on", async () => {
    await kubectl(["delete", "validatingadmissionpolicybinding", "cni-repair-own-node"], { plane: controlPlane() });
    const run = await start("cni-repair-as-1", "warned");
    expect(run.controller.logsWith("admission policies checked")).to.deep.equal([]);
    const warnings = run.controller.logs.filter((line) => line.level === "warn").map((line) => line.msg);
    expect(warnings).to.deep.equal(["admission policy missing"]);
    const [missing] = run.controller.logsWith("admission policy missing");
    expect(missing).to.deep.include({ policy: "cni-repair-own-node", missing: "binding" });
    expect(String(missing?.consequence)).to.include("docs/threat-model.md");
    expect((await run.controller.get("/readyz")).status).to.equal(200);
  });
});
