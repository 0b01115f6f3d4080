// Breakage explained by a CNI agent outage, and the fail-safe agent gate, against the real API server (issue 12,
// acceptance 2 and 5; issue 27 item 1): a total outage heals under the in-flight caps, not the cluster-wide pace,
// once the agents are back, held `cni_agent_not_ready` (never `storm`) meanwhile, while a wave nothing explains
// stays held; a Ready condition without a time, or with an old one, counts only from our own observation.
import { expect } from "chai";
import { agentName, createCniAgent, setCniAgentReady } from "../../harness/cni-agents.js";
import { FakeKubelet } from "../../harness/fake-kubelet.js";
import { inflightPeaks } from "../../harness/inflight-audit.js";
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

  it("outage on 4 nodes, 80 pods, at the default pace and caps: nothing before min-ready, then repaired far faster than the pace, within the caps; an unexplained wave on a 5th node stays held", async function () {
    this.timeout(240_000);
    // Deletions finish after 1 s, as a kubelet's would take a moment: the in-flight caps, not the pace, must bind.
    await kubelet.stop();
    kubelet = await FakeKubelet.start(controlPlane().kubeConfig(), t.namespace, 1_000);
    const PER_NODE = 20;
    const nodes = ["out-a", "out-b", "out-c", "out-d"].map((node) => new NodeWave(t.api, t.namespace, node));
    for (const wave of nodes)
      await createCniAgent(t.api, { namespace: t.namespace, mesh: "istio", nodeName: wave.node });
    for (const wave of nodes) await wave.createHealthy(wave.names(PER_NODE));
    // A node whose agent has been Ready for minutes: its breakage nothing explains.
    const calm = new NodeWave(t.api, t.namespace, "calm");
    await createCniAgent(t.api, {
      namespace: t.namespace,
      mesh: "istio",
      nodeName: calm.node,
      readySince: new Date(Date.now() - 5 * 60_000),
    });
    await calm.createHealthy(calm.names(10));
    // The defaults for the pace (60/min, burst 10) and the caps (10 per node, 20 per namespace).
    await t.start(gate());
    await sleep(MIN_READY_MS); // the calm node's agent Ready for min-ready by our own observation

    // Every meshed pod on the 4 nodes breaks while their agents are NotReady; all 10 on the calm node break too.
    for (const wave of nodes) await wave.break(wave.names(PER_NODE));
    await waitFor("80 held for the agents", async () => (await held("cni_agent_not_ready")) === 80);
    await calm.break(calm.names(10));
    await waitFor(
      "the calm node's breaker open",
      async () => (await t.metric("cni_repair_storm_breaker_open", { scope: "node" })) === 1,
    );
    await waitFor(
      "the calm node's rest held as storm",
      async () => (await held("storm")) === 10 - calm.deletes().length,
    );
    const calmEarly = calm.deletes().length;
    expect(calmEarly, "deleted on the calm node before its breaker opened").to.be.at.most(5);
    await sleep(2_000);
    expect(nodes.flatMap((wave) => wave.deletes())).to.deep.equal([]);

    const readyAt = Date.now();
    for (const wave of nodes) {
      await setCniAgentReady(t.api, { namespace: t.namespace, name: agentName("istio", wave.node) }, new Date(readyAt));
    }
    const all = () => nodes.flatMap((wave) => wave.deletes()).sort((a, b) => a.atMs - b.atMs);
    await waitFor("all 80 repaired", () => all().length === 80, { timeoutMs: 120_000, intervalMs: 500 });
    const deletes = all();
    const first = deletes[0]?.atMs ?? 0;
    const last = deletes.at(-1)?.atMs ?? 0;
    // Not before the agents were Ready for --cni-agent-min-ready (our observation starts after readyAt).
    expect(first - readyAt).to.be.at.least(MIN_READY_MS - 1_000);
    // The pace would need 70 s after its burst of 10 (one a second); 2.5 pods/s or faster means 32 s at most.
    const rate = (deletes.length - 1) / ((last - first) / 1_000);
    console.log(`      80 pods repaired in ${last - first} ms after the first delete: ${rate.toFixed(1)} pods/s`);
    expect(last - first, "first to last delete, ms").to.be.below((deletes.length / 2.5) * 1_000);
    expect(new Set(deletes.map((d) => d.uid)).size).to.equal(80);
    // Never more in flight than the caps (10 per node, 20 in the namespace), and more than the pace's burst at once.
    await waitFor("every deleted pod gone", async () =>
      (await t.api.listNamespacedPod({ namespace: t.namespace })).items.every(
        (pod) => !pod.metadata?.deletionTimestamp,
      ),
    );
    const peaks = inflightPeaks(controlPlane().auditLogPath, t.namespace, (name) => name.replace(/-pod-\d+$/, ""));
    console.log(
      `      in flight at most: ${peaks.total} in the namespace, ${JSON.stringify(Object.fromEntries(peaks.byGroup))} per node`,
    );
    expect(peaks.total).to.be.at.most(20).and.above(10);
    for (const [node, peak] of peaks.byGroup) expect(peak, `in flight on ${node}`).to.be.at.most(10);
    // The wave nothing explains: still held, nothing more deleted there.
    expect(calm.deletes()).to.have.length(calmEarly);
    expect(await held("storm")).to.equal(10 - calmEarly);
    expect(await t.metric("cni_repair_storm_breaker_open", { scope: "node" })).to.equal(1);
    expect(await t.metric("cni_repair_storm_breaker_open", { scope: "cluster" })).to.equal(0);
    expect(await held("rate_limit")).to.equal(0);
  });

  for (const [what, lastTransitionTime] of [
    ["without lastTransitionTime", () => "no time" as const],
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
      await setCniAgentReady(
        t.api,
        { namespace: t.namespace, name: agentName("istio", wave.node) },
        lastTransitionTime(),
      );
      await waitFor("both deleted", () => wave.deletes().length === 2, { timeoutMs: 20_000 });
      for (const d of wave.deletes()) expect(d.atMs - seenAt).to.be.at.least(MIN_READY_MS - 500);
    });
  }
});
