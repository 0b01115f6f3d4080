// The taint patcher against the real API server: a node changed between our read and our patch is not written
// (the `test` of the version judged refuses the stale patch, 422), even when the change left its taints as they
// were (another replica's add and remove); only spec.taints is ever sent; the audit log shows each attempt.
import { randomBytes } from "node:crypto";
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Taint } from "@kubernetes/client-node";
import { expect } from "chai";
import { toNodeFacts } from "../../../src/informer/node-facts.js";
import { KubeConfigCredentials } from "../../../src/kube/kubeconfig-credentials.js";
import { KubeTransport } from "../../../src/kube/transport.js";
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

  it("a taint added between read and patch is kept: the stale patch is refused (422) and nothing is written", async () => {
    const name = await createNode([ISTIO]);
    const stale = await read(name);
    // Someone else (a cluster admin, another controller) adds a taint after our read.
    const fresh = [...((await api.readNode({ name })).spec?.taints ?? []), GPU];
    await api.patchNode(
      { name, body: { spec: { taints: fresh } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );

    const outcome = await patchTaints(transport, stale, { kind: "remove", keys: [ISTIO.key ?? ""] });

    expect(outcome).to.deep.equal({ kind: "stale", status: 422 });
    const final = await taintsOf(name);
    expect(final).to.include("dedicated=gpu:NoSchedule");
    expect(final).to.include("cni.istio.io/not-ready=:NoSchedule");
    const patches = ourPatches(name);
    expect(patches.map((e) => e.responseStatus?.code)).to.deep.equal([422]);
    const ops = patches[0]?.requestObject as unknown as { op: string; path: string }[];
    expect(ops.map((op) => `${op.op} ${op.path}`)).to.deep.equal([
      "test /metadata/resourceVersion",
      "test /spec/taints",
      "add /spec/taints",
    ]);

    // Judged again on the node as it is now, the same edit goes through, and the other taint stays.
    expect(await patchTaints(transport, await read(name), { kind: "remove", keys: [ISTIO.key ?? ""] })).to.deep.equal({
      kind: "patched",
    });
    const after = await taintsOf(name);
    expect(after).to.include("dedicated=gpu:NoSchedule");
    expect(after).to.not.include("cni.istio.io/not-ready=:NoSchedule");
  });

  it("a node whose taints changed and changed back since it was judged is not written (ABA)", async () => {
    const name = await createNode([GPU]);
    const judged = await read(name);
    // Another replica adds our taint and removes it again: the taints are as judged, the node is not.
    const taints = (await api.readNode({ name })).spec?.taints ?? [];
    for (const next of [[...taints, ISTIO], taints]) {
      await api.patchNode(
        { name, body: { spec: { taints: next } } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
    }

    const outcome = await patchTaints(transport, judged, { kind: "add", key: ISTIO.key ?? "" });

    expect(outcome).to.deep.equal({ kind: "stale", status: 422 });
    expect(await taintsOf(name)).to.not.include("cni.istio.io/not-ready=:NoSchedule");
    expect(ourPatches(name).map((e) => e.responseStatus?.code)).to.deep.equal([422]);
  });

  it("a node that has no taints at all gets ours (the test for an absent list passes)", async () => {
    const name = await createNode([]);
    // The TaintNodesByCondition admission may have added node.kubernetes.io/not-ready; start from no taints.
    await api.patchNode(
      { name, body: { spec: { taints: null } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    const outcome = await patchTaints(transport, await read(name), { kind: "add", key: ISTIO.key ?? "" });
    expect(outcome).to.deep.equal({ kind: "patched" });
    expect(await taintsOf(name)).to.deep.equal(["cni.istio.io/not-ready=:NoSchedule"]);
  });

  it("an edit already true of the node writes nothing", async () => {
    const name = await createNode([GPU]);
    const outcome = await patchTaints(transport, await read(name), { kind: "remove", keys: [ISTIO.key ?? ""] });
    expect(outcome.kind).to.equal("unchanged");
    expect(ourPatches(name)).to.deep.equal([]);
  });
});
