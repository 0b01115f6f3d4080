// Breakage explained by a CNI agent outage, and the fail-safe agent gate, against the real API server (issue 12,
// acceptance 2 and 5): a total outage heals at the pace once the agents are back, held `cni_agent_not_ready` (never
// `storm`) meanwhile; a Ready condition without a time, or with an old one, counts only from our own observation.
import { type CoreV1Api, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { expect } from "chai";
import { agentName, createCniAgent, setCniAgentReady } from "../../harness/cni-agents.js";
import { FakeKubelet } from "../../harness/fake-kubelet.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest } from "../controller/start.js";
import { NodeWave, sleep } from "./storm-waves.js";

const MIN_READY_MS = 5_000;

describe("CNI agent outage and the fail-safe gate", () => {
  const t = controllerTest();
  let kubelet: FakeKubelet;

  beforeEach(async () => {
    kubelet = await FakeKubelet.start(controlPlane().kubeConfig(), t.namespace);
  });

  afterEach(async () => {
    await kubelet.stop();
  });

  const gate = () => [
    "--cni-agent-gate=on",
    `--cni-agent-min-ready=${MIN_READY_MS / 1000}s`,
    `--cni-agent-namespace=${t.namespace}`,
  ];
  const held = (reason: string) => t.metric("cni_repair_pods_held", { reason });

  it("total outage on 4 nodes: held cni_agent_not_ready, nothing deleted before min-ready, then all repaired at the pace", async function () {
    this.timeout(180_000);
    const nodes = ["out-a", "out-b", "out-c", "out-d"].map((node) => new NodeWave(t.api, t.namespace, node));
    for (const wave of nodes)
      await createCniAgent(t.api, { namespace: t.namespace, mesh: "istio", nodeName: wave.node });
    for (const wave of nodes) await wave.createHealthy(wave.names(6));
    await t.start([...gate(), "--max-deletions-per-minute=30", "--deletion-burst=4"]);

    // Every meshed pod breaks while every agent is NotReady.
    for (const wave of nodes) await wave.break(wave.names(6));
    await waitFor("24 held for the agents", async () => (await held("cni_agent_not_ready")) === 24);
    expect(await held("storm")).to.equal(0);
    expect(await t.metric("cni_repair_storm_breaker_open", { scope: "node" })).to.equal(0);
    expect(await t.metric("cni_repair_storm_breaker_open", { scope: "cluster" })).to.equal(0);
    await sleep(2_000);
    expect(nodes.flatMap((wave) => wave.deletes())).to.deep.equal([]);

    const readyAt = Date.now();
    for (const wave of nodes) {
      await setCniAgentReady(t.api, { namespace: t.namespace, name: agentName("istio", wave.node) }, new Date(readyAt));
    }
    const all = () => nodes.flatMap((wave) => wave.deletes()).sort((a, b) => a.atMs - b.atMs);
    await waitFor("all 24 repaired", () => all().length === 24, { timeoutMs: 90_000 });
    const deletes = all();
    // Not before the agents were Ready for --cni-agent-min-ready (our observation starts after readyAt).
    expect((deletes[0]?.atMs ?? 0) - readyAt).to.be.at.least(MIN_READY_MS - 1_000);
    // At the pace: the burst of 4, then one every 2 s (30 per minute); 1 s of slack for the audit log's clock.
    const first = deletes[0]?.atMs ?? 0;
    deletes.forEach((d, i) => {
      expect(d.atMs - first, `delete #${i + 1}`).to.be.at.least(Math.max(0, i - 3) * 2_000 - 1_000);
    });
    expect(new Set(deletes.map((d) => d.uid)).size).to.equal(24);
    expect(await held("storm")).to.equal(0);
    expect(t.controller.logsWith("storm breaker open: holding deletions")).to.deep.equal([]);
  });

  /** Rewrites the agent's Ready condition: True, with the given lastTransitionTime or none at all. */
  const writeReady = async (api: CoreV1Api, name: string, lastTransitionTime: Date | undefined) => {
    await api.patchNamespacedPodStatus(
      {
        namespace: t.namespace,
        name,
        body: {
          status: {
            phase: "Running",
            conditions: [{ type: "Ready", status: "True", ...(lastTransitionTime && { lastTransitionTime }) }],
          },
        },
      },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
  };

  for (const [what, lastTransitionTime] of [
    ["without lastTransitionTime", () => undefined],
    ["with a lastTransitionTime 30 s older than when the controller saw it", () => new Date(Date.now() - 30_000)],
  ] as const) {
    it(`a Ready condition ${what}: no delete before --cni-agent-min-ready by our own observation`, async function () {
      this.timeout(60_000);
      const wave = new NodeWave(t.api, t.namespace, "skew-node");
      await createCniAgent(t.api, { namespace: t.namespace, mesh: "istio", nodeName: wave.node });
      await wave.createHealthy(wave.names(2));
      await t.start(gate());
      await wave.break(wave.names(2));
      await waitFor("2 held for the agent", async () => (await held("cni_agent_not_ready")) === 2);

      const seenAt = Date.now();
      await writeReady(t.api, agentName("istio", wave.node), lastTransitionTime());
      await waitFor("both deleted", () => wave.deletes().length === 2, { timeoutMs: 20_000 });
      for (const d of wave.deletes()) expect(d.atMs - seenAt).to.be.at.least(MIN_READY_MS - 500);
    });
  }
});
