// Startup-taint management by the controller process against the real API server (nodes and agent pods written
// directly; the whole-cluster scenario with a scheduler is test/integration/e2e/startup-taint.test.ts):
// continuous mode re-taints a node whose agent stays NotReady, never more than the share cap, and untaints on
// recovery; report mode counts what it would do and writes no Node. The audit log is the judge.
import { randomBytes } from "node:crypto";
import type { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { type AuditEvent, nodeWrites, podRequests } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { agentName, createCniAgent, setCniAgentNotReady, setCniAgentReady } from "../../harness/cni-agents.js";
import { runCommand } from "../../harness/controller-process.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest } from "../controller/start.js";

const ISTIO = "cni.istio.io/not-ready";
const NOT_READY_AFTER_MS = 3_000;

describe("startup taints: the controller", function () {
  this.timeout(120_000);
  const t = controllerTest();
  let nodes: string[] = [];

  afterEach(async () => {
    for (const name of nodes) await t.api.deleteNode({ name }).catch(() => {});
    nodes = [];
  });

  /** Nodes with a Ready agent each (in the test's namespace), carrying these taints. */
  const createNodes = async (count: number, taints: { key: string; effect: string }[] = []) => {
    const prefix = `st-${randomBytes(3).toString("hex")}`;
    const created = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
    for (const name of created) {
      await t.api.createNode({
        body: { metadata: { name, labels: { "cni-repair.test/owned": "true" } }, spec: { taints } },
      });
      nodes.push(name);
      await createCniAgent(t.api, {
        namespace: t.namespace,
        mesh: "istio",
        nodeName: name,
        readySince: new Date(Date.now() - 60_000),
      });
    }
    return created;
  };
  const agent = (node: string) => ({ namespace: t.namespace, name: agentName("istio", node) });
  const ours = (node: string) =>
    nodeWrites(controlPlane().auditLogPath, node).filter((e) => e.userAgent?.startsWith("cni-repair/"));
  const gateArgs = [`--cni-agent-gate=on`, `--cni-agent-namespace=${t.namespace}`, "--cni-agent-min-ready=1s"];

  it("continuous: re-taints only the node whose agent stays NotReady, at most the share cap in an outage, and untaints on recovery", async () => {
    const created = await createNodes(5);
    const [first = "", ...rest] = created;
    // Two of all the nodes the cluster has (other tests' may be there too), rounded down.
    const total = (await t.api.listNode()).items.length;
    const share = (2.5 / total).toFixed(6);
    await t.start([
      ...gateArgs,
      "--startup-taint=continuous",
      `--startup-taint-not-ready-after=${NOT_READY_AFTER_MS / 1000}s`,
      `--startup-taint-max-share=${share}`,
    ]);

    // One agent down: only its node is tainted, with NoSchedule, once it has stayed NotReady long enough.
    await setCniAgentNotReady(t.api, agent(first));
    const downAt = lastStatusWrite(t.namespace, agentName("istio", first));
    await waitFor("the first node tainted", async () => (await taintsOf(t.api, first)).length === 1, {
      timeoutMs: 20_000,
    });
    expect(await taintsOf(t.api, first)).to.deep.equal([`${ISTIO}:NoSchedule`]);
    for (const node of rest) expect(await taintsOf(t.api, node), node).to.deep.equal([]);
    const added = Date.parse(ours(first)[0]?.stageTimestamp ?? "");
    expect(added - downAt, "tainted after --startup-taint-not-ready-after").to.be.at.least(NOT_READY_AFTER_MS - 100);

    // Every agent down: at most two nodes tainted; the other three are held by the cap, and stay untainted.
    for (const node of rest) await setCniAgentNotReady(t.api, agent(node));
    await waitFor(
      "three nodes held by the share cap",
      async () => (await t.metric("cni_repair_startup_taint_held_nodes", { reason: "share_cap" })) === 3,
      { timeoutMs: 20_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, NOT_READY_AFTER_MS));
    const tainted: string[] = [];
    for (const node of created) if ((await taintsOf(t.api, node)).length > 0) tainted.push(node);
    expect(tainted).to.have.length(2);
    expect(tainted).to.include(first);
    expect(await t.metric("cni_repair_startup_taint_nodes", { key: ISTIO })).to.equal(2);

    // Recovery, the untainted nodes' agents first (a freed place under the cap must not go to a node still down).
    const untainted = created.filter((node) => !tainted.includes(node));
    for (const node of [...untainted, ...tainted]) await setCniAgentReady(t.api, agent(node), new Date());
    await waitFor(
      "every taint removed",
      async () => {
        for (const node of created) if ((await taintsOf(t.api, node)).length > 0) return false;
        return true;
      },
      { timeoutMs: 20_000 },
    );

    // The taint the API server put on every new node (node.kubernetes.io/not-ready) was never touched.
    for (const node of created)
      expect(await allTaints(t.api, node), node).to.deep.equal(["node.kubernetes.io/not-ready:NoSchedule"]);

    // The audit log: two adds and two removes, each a tested JSON patch of spec.taints, never NoExecute.
    const writes = created.flatMap(ours);
    expect(writes.every((e) => e.verb === "patch" && e.responseStatus?.code === 200)).to.equal(true);
    const kinds = writes.map(patchKind);
    expect(kinds.filter((k) => k === "add")).to.have.length(2);
    expect(kinds.filter((k) => k === "remove")).to.have.length(2);
    for (const node of untainted) expect(ours(node), node).to.deep.equal([]);
    expect(
      await t.metric("cni_repair_startup_taint_changes_total", { key: ISTIO, action: "add", result: "success" }),
    ).to.equal(2);
    expect(
      await t.metric("cni_repair_startup_taint_changes_total", { key: ISTIO, action: "remove", result: "success" }),
    ).to.equal(2);
  });

  it("report mode: counts the removal and the re-taint it would make, and writes no Node", async () => {
    const [tainted = "", down = ""] = await createNodes(2);
    await t.api.patchNode({
      name: tainted,
      body: [{ op: "add", path: "/spec/taints", value: [{ key: ISTIO, effect: "NoSchedule" }] }],
    });
    await setCniAgentNotReady(t.api, agent(down));
    await t.start([
      ...gateArgs,
      "--mode=report",
      "--startup-taint=continuous",
      `--startup-taint-not-ready-after=${NOT_READY_AFTER_MS / 1000}s`,
      "--startup-taint-max-share=1",
    ]);
    const counted = (action: string) =>
      t.metric("cni_repair_startup_taint_changes_total", { key: ISTIO, action, result: "report" });
    await waitFor(
      "the would-be removal and re-taint counted",
      async () => (await counted("remove")) === 1 && (await counted("add")) === 1,
      {
        timeoutMs: 20_000,
      },
    );
    // Looked at again and again (agent changes, waits): still counted once each, and nothing written.
    await setCniAgentReady(t.api, agent(tainted), new Date(Date.now() - 30_000));
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect([await counted("remove"), await counted("add")]).to.deep.equal([1, 1]);
    expect(ours(tainted)).to.deep.equal([]);
    expect(ours(down)).to.deep.equal([]);
    expect(await taintsOf(t.api, tainted)).to.deep.equal([`${ISTIO}:NoSchedule`]);
    expect(await taintsOf(t.api, down)).to.deep.equal([]);
    expect(t.controller.output()).to.include("would remove");
  });

  it("scan and explain show each tainted node, what run would do and why the taint is still there; nothing written", async () => {
    const [ready = "", down = ""] = await createNodes(2);
    for (const node of [ready, down]) {
      await t.api.patchNode({
        name: node,
        body: [{ op: "add", path: "/spec/taints", value: [{ key: ISTIO, effect: "NoSchedule" }] }],
      });
    }
    await setCniAgentNotReady(t.api, agent(down));
    const scan = (...args: string[]) =>
      runCommand([
        "scan",
        `--kubeconfig=${controlPlane().kubeconfigPath}`,
        `--field-selector=metadata.namespace=${t.namespace}`,
        ...gateArgs,
        "--startup-taint=bootstrap-only",
        ...args,
      ]);
    const table = await scan();
    expect(table.code, table.stderr).to.equal(0);
    const line = (node: string) => table.stdout.split("\n").find((l) => l.startsWith(`${node} `)) ?? "";
    expect(line(ready)).to.include(ISTIO).and.include("remove (CNI agent Ready for");
    expect(line(down)).to.include("hold: agent_not_ready").and.include("the CNI agent is not Ready");
    const json = JSON.parse((await scan("-o", "json")).stdout) as {
      startupTaints: { node: string; action: string; reason: string | null }[];
    };
    const mine = json.startupTaints.filter((record) => record.node === ready || record.node === down);
    expect(mine.map((record) => [record.action, record.reason])).to.deep.equal([
      ["remove", null],
      ["hold", "agent_not_ready"],
    ]);
    // explain of a pod on the node whose agent is down says why the node's taint is still there.
    const healthy = { validator: { kind: "succeeded" } } as const;
    await createPodInState(t.api, { namespace: t.namespace, name: "on-down-node", nodeName: down }, healthy);
    const explained = await runCommand([
      "explain",
      `${t.namespace}/on-down-node`,
      `--kubeconfig=${controlPlane().kubeconfigPath}`,
      ...gateArgs,
      "--startup-taint=bootstrap-only",
    ]);
    expect(explained.stdout).to.include(`Taint:      node ${down} carries ${ISTIO}; hold: agent_not_ready (`);
    // --repair repairs pods only: the taints stay.
    expect((await scan("--repair")).code).to.equal(0);
    expect(ours(ready)).to.deep.equal([]);
    expect(await taintsOf(t.api, ready)).to.deep.equal([`${ISTIO}:NoSchedule`]);
  });
});

/** The node's taints with our key (the API server's own node.kubernetes.io/not-ready is left out). */
async function taintsOf(api: CoreV1Api, name: string): Promise<string[]> {
  return (await allTaints(api, name)).filter((taint) => taint.startsWith(`${ISTIO}:`));
}

async function allTaints(api: CoreV1Api, name: string): Promise<string[]> {
  return ((await api.readNode({ name })).spec?.taints ?? []).map((taint) => `${taint.key}:${taint.effect}`);
}

/** "add" or "remove": what a startup-taint PATCH did to our key, from its JSON patch ops. */
function patchKind(event: AuditEvent): string {
  const ops = event.requestObject as unknown as {
    op: string;
    path: string;
    value?: { key: string; effect: string }[];
  }[];
  // The version judged, then the taints judged, then the new list.
  expect(ops.map((op) => `${op.op} ${op.path}`).slice(0, 2)).to.deep.equal([
    "test /metadata/resourceVersion",
    "test /spec/taints",
  ]);
  const before = (ops[1] as { value?: { key: string }[] | null }).value ?? [];
  const after = ops[2]?.op === "remove" ? [] : (ops[2]?.value ?? []);
  for (const taint of after) if (taint.key === ISTIO) expect(taint.effect).to.equal("NoSchedule");
  const had = before.some((taint) => taint.key === ISTIO);
  const has = after.some((taint) => taint.key === ISTIO);
  return had === has ? "none" : has ? "add" : "remove";
}

function lastStatusWrite(namespace: string, pod: string): number {
  const writes = podRequests(controlPlane().auditLogPath, namespace).filter(
    (e) => e.objectRef?.name === pod && e.objectRef.subresource === "status",
  );
  return Date.parse(writes.at(-1)?.stageTimestamp ?? "");
}
