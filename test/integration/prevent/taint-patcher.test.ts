// The taint patcher against the real API server: a taint someone else changes between our read and our patch
// survives (the `test` op refuses the stale patch, the node is read afresh), only spec.taints is ever sent, and
// the audit log shows both attempts.
import { randomBytes } from "node:crypto";
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Taint } from "@kubernetes/client-node";
import { expect } from "chai";
import { KubeConfigCredentials } from "../../../src/kube/kubeconfig-credentials.js";
import { KubeTransport } from "../../../src/kube/transport.js";
import { toNodeFacts } from "../../../src/prevent/node-facts.js";
import { patchTaints } from "../../../src/prevent/taint-patcher.js";
import { nodeWrites } from "../../harness/audit-log.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

const ISTIO: V1Taint = { key: "cni.istio.io/not-ready", effect: "NoSchedule" };
const GPU: V1Taint = { key: "dedicated", value: "gpu", effect: "NoSchedule" };

describe("startup taint patcher", () => {
  let api: CoreV1Api;
  let transport: KubeTransport;
  const created: string[] = [];

  beforeEach(() => {
    const plane = controlPlane();
    api = plane.kubeConfig().makeApiClient(CoreV1Api);
    transport = new KubeTransport(new KubeConfigCredentials(plane.kubeConfig()), { userAgent: "cni-repair/test" });
  });

  afterEach(async () => {
    await transport.close();
    for (const name of created.splice(0)) await api.deleteNode({ name }).catch(() => {});
  });

  const createNode = async (taints: V1Taint[]) => {
    const name = `taint-${randomBytes(4).toString("hex")}`;
    created.push(name);
    await api.createNode({
      body: { metadata: { name, labels: { "cni-repair.test/owned": "true" } }, spec: { taints } },
    });
    return name;
  };
  const read = async (name: string) => {
    const facts = toNodeFacts(await api.readNode({ name }));
    if (!facts) throw new Error(`node ${name} unreadable`);
    return facts;
  };
  const taintsOf = async (name: string) =>
    ((await api.readNode({ name })).spec?.taints ?? []).map((t) => `${t.key}=${t.value ?? ""}:${t.effect}`).sort();
  const ourPatches = (name: string) =>
    nodeWrites(controlPlane().auditLogPath, name).filter((e) => e.userAgent?.startsWith("cni-repair/test"));

  it("a taint added between read and patch is kept: the stale patch is refused (422), the fresh one applied", async () => {
    const name = await createNode([ISTIO]);
    const stale = await read(name);
    // Someone else (a cluster admin, another controller) adds a taint after our read.
    const fresh = [...((await api.readNode({ name })).spec?.taints ?? []), GPU];
    await api.patchNode(
      { name, body: { spec: { taints: fresh } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );

    const outcome = await patchTaints(transport, stale, { kind: "remove", keys: [ISTIO.key ?? ""] });

    expect(outcome.kind).to.equal("patched");
    expect(outcome.kind === "patched" && outcome.attempts).to.equal(2);
    const final = await taintsOf(name);
    expect(final).to.include("dedicated=gpu:NoSchedule");
    expect(final).to.not.include("cni.istio.io/not-ready=:NoSchedule");
    const patches = ourPatches(name);
    expect(patches.map((e) => e.responseStatus?.code)).to.deep.equal([422, 200]);
    for (const patch of patches) {
      const ops = patch.requestObject as unknown as { op: string; path: string }[];
      expect(ops.map((op) => op.path)).to.deep.equal(["/spec/taints", "/spec/taints"]);
      expect(ops[0]?.op).to.equal("test");
    }
  });

  it("a taint removed between read and patch stays removed; other taints keep their values", async () => {
    const name = await createNode([GPU]);
    const stale = await read(name);
    const others = ((await api.readNode({ name })).spec?.taints ?? []).filter((t) => t.key !== GPU.key);
    await api.patchNode(
      { name, body: { spec: { taints: others } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );

    const outcome = await patchTaints(transport, stale, { kind: "add", key: ISTIO.key ?? "" });

    expect(outcome.kind).to.equal("patched");
    const final = await taintsOf(name);
    expect(final).to.include("cni.istio.io/not-ready=:NoSchedule");
    expect(final).to.not.include("dedicated=gpu:NoSchedule");
    expect(ourPatches(name).map((e) => e.responseStatus?.code)).to.deep.equal([422, 200]);
  });

  it("a node that has no taints at all gets ours (the test for an absent list passes)", async () => {
    const name = await createNode([]);
    // The TaintNodesByCondition admission may have added node.kubernetes.io/not-ready; start from no taints.
    await api.patchNode(
      { name, body: { spec: { taints: null } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    const outcome = await patchTaints(transport, await read(name), { kind: "add", key: ISTIO.key ?? "" });
    expect(outcome.kind === "patched" && outcome.attempts).to.equal(1);
    expect(await taintsOf(name)).to.deep.equal(["cni.istio.io/not-ready=:NoSchedule"]);
  });

  it("an edit already true of the node writes nothing", async () => {
    const name = await createNode([GPU]);
    const outcome = await patchTaints(transport, await read(name), { kind: "remove", keys: [ISTIO.key ?? ""] });
    expect(outcome.kind).to.equal("unchanged");
    expect(ourPatches(name)).to.deep.equal([]);
  });
});
