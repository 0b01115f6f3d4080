// Issue 25: a replica that loses the Lease while its startup-taint worker waits for a key must not patch a Node
// afterwards. The operator's reproduction froze the leader (SIGSTOP) while the node's agent was down; on resume its
// worker, parked in queue.get() since before the Lease went, took the node's key and patched the Node the new
// leader owned. Here the leadership is driven by hand, so the worker is parked in get() when it goes, every time.
// The controller is the real composition (composeController) against the real API server; the audit log judges.
import { randomBytes } from "node:crypto";
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { nodeWrites } from "../../harness/audit-log.js";
import { agentName, createCniAgent, setCniAgentReady } from "../../harness/cni-agents.js";
import { type InProcessController, startInProcessController } from "../../harness/in-process-controller.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { HandLeadership } from "../../support/hand-leadership.js";

const ISTIO = "cni.istio.io/not-ready";
/** How long the test watches for a write that must not come (the worker would act within milliseconds). */
const QUIET_MS = 3_000;

describe("startup taints: a replica that lost the Lease", function () {
  this.timeout(60_000);
  let node = "";
  let controller: InProcessController | undefined;

  afterEach(async function () {
    if (this.currentTest?.state === "failed") console.log(controller?.lines.join("\n"));
    await controller?.stop();
    controller = undefined;
    await controlPlane()
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .deleteNode({ name: node })
      .catch(() => {});
  });

  it("does not patch a Node once the Lease is gone, though its worker was already waiting for the node's key; the next term does", async () => {
    const api = controlPlane().kubeConfig().makeApiClient(CoreV1Api);
    const namespace = await createTestNamespace(api);
    node = `lost-lease-${randomBytes(3).toString("hex")}`;
    await api.createNode({
      body: { metadata: { name: node }, spec: { taints: [{ key: ISTIO, effect: "NoSchedule" }] } },
    });
    // The agent is there but not Ready yet: the taint is held.
    await createCniAgent(api, { namespace, mesh: "istio", nodeName: node });

    const flags = [
      "--cni-agent-gate=on",
      // No wait once Ready: the first look after the agent turns Ready removes the taint.
      "--cni-agent-min-ready=0s",
      "--startup-taint=bootstrap-only",
    ];
    const leadership = new HandLeadership(true);
    controller = startInProcessController(namespace, flags, { leadership });
    const { parts, registry } = controller;
    if (parts.query.startupTaints() === undefined) throw new Error("startup taints are not on");
    const taints = { view: (name: string) => parts.query.startupTaint(name, "observed") };

    // Leading, the worker looks at the node, holds its taint for the agent, and waits in get() for the next key.
    const held = async () =>
      (await registry.getSingleMetric("cni_repair_startup_taint_held_nodes")?.get())?.values.find(
        (value) => value.labels.reason === "agent_not_ready",
      )?.value;
    await waitFor("the taint held for the agent", async () => (await held()) === 1, { timeoutMs: 20_000 });

    // The Lease goes (a successor leads now); then the agent turns Ready, which puts the node's key on the queue.
    leadership.set(false);
    await setCniAgentReady(api, { namespace, name: agentName("istio", node) }, new Date(Date.now() - 60_000));
    // Seen Ready: the taint is no longer held (the decision is to remove it; none if it is already gone).
    await waitFor("the agent seen Ready", () => taints.view(node)?.decision.kind !== "hold", { timeoutMs: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    const ours = () =>
      nodeWrites(controlPlane().auditLogPath, node).filter((e) => e.userAgent?.startsWith("cni-repair/"));
    expect(ours(), "Node writes without the Lease").to.deep.equal([]);
    expect((await api.readNode({ name: node })).spec?.taints?.map((taint) => taint.key)).to.include(ISTIO);

    // The key was handed back, not lost: the next term removes the taint, with one PATCH.
    leadership.set(true);
    await waitFor("the taint removed in the next term", async () => ours().length > 0, { timeoutMs: 20_000 });
    expect(ours().map((event) => [event.verb, event.responseStatus?.code])).to.deep.equal([["patch", 200]]);
    expect((await api.readNode({ name: node })).spec?.taints?.map((taint) => taint.key) ?? []).to.not.include(ISTIO);
  });
});
