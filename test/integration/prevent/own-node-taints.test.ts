// Per-node mode: the startup-taints admission policy keeps each node's instance to its own node. With the token the
// kubelet would project (bound to the controller's pod on node A, so it names node A), removing the startup taint
// of node B is refused (403 naming the policy), of node A allowed; the audit log records what the server answered.
import { randomBytes } from "node:crypto";
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { toNodeFacts } from "../../../src/informer/node-facts.js";
import { ApiError } from "../../../src/kube/api-error.js";
import type { KubeTransport } from "../../../src/kube/transport.js";
import { patchTaints } from "../../../src/prevent/taint-patcher.js";
import { createControllerPod, deleteControllerPod } from "../../harness/controller-pod.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { serviceAccountToken } from "../../harness/service-account-files.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { installTaintPolicy, type TaintPolicyInstall } from "./taint-policy-install.js";

const ISTIO = "cni.istio.io/not-ready";

describe("startup taints, per-node: each instance changes only its own node's taint", function () {
  this.timeout(120_000);
  let admin: CoreV1Api;
  let install: TaintPolicyInstall | undefined;
  let asNodeA: KubeTransport | undefined;
  let controllerPod: { namespace: string; name: string } | undefined;
  const suffix = randomBytes(4).toString("hex");
  const [nodeA, nodeB] = [`own-a-${suffix}`, `own-b-${suffix}`];

  /** Removes node's startup taint as `as` (the controller's patcher): the status the server answered, its message. */
  const removeTaint = async (
    node: string,
    as: KubeTransport | undefined = asNodeA,
  ): Promise<{ status: number; message: string }> => {
    const seen = toNodeFacts(await admin.readNode({ name: node }));
    if (!seen || !as) throw new Error(`node ${node} unreadable`);
    try {
      const result = await patchTaints(as, seen, { kind: "remove", keys: [ISTIO] });
      return { status: result.kind === "patched" ? 200 : -1, message: result.kind };
    } catch (error) {
      if (error instanceof ApiError) return { status: error.status, message: error.message };
      throw error;
    }
  };
  const taintKeys = async (node: string) =>
    ((await admin.readNode({ name: node })).spec?.taints ?? []).map((taint) => taint.key);

  before(async () => {
    const plane = controlPlane();
    admin = plane.kubeConfig().makeApiClient(CoreV1Api);
    install = await installTaintPolicy(plane, await createTestNamespace(admin), "per-node");
    for (const name of [nodeA, nodeB]) {
      await admin.createNode({
        body: {
          metadata: { name, labels: { "cni-repair.test/owned": "true" } },
          spec: { taints: [{ key: ISTIO, effect: "NoSchedule" }] },
        },
      });
    }
    controllerPod = { namespace: install.namespace, name: "cni-repair-own-node-taints" };
    const pod = await createControllerPod(plane, {
      namespace: install.namespace,
      serviceAccount: install.serviceAccount,
      podName: controllerPod.name,
      nodeName: nodeA,
    });
    asNodeA = install.as(await serviceAccountToken(plane, install.namespace, install.serviceAccount, pod));
    // The API server loads a new policy in the background: wait until it refuses a label change (a probe that
    // changes no taint; a new value each time, since a patch that changes nothing is not judged at all).
    await waitFor(
      "the policy to be enforced",
      async () => {
        try {
          await asNodeA?.request("patch", "PATCH", `/api/v1/nodes/${nodeB}`, {
            body: [{ op: "add", path: "/metadata/labels/probe", value: `p${Date.now()}` }],
            contentType: "application/json-patch+json",
          });
          return false;
        } catch (error) {
          return error instanceof ApiError && error.status === 403;
        }
      },
      { timeoutMs: 30_000, intervalMs: 300 },
    );
  });

  after(async () => {
    await asNodeA?.close();
    if (controllerPod) await deleteControllerPod(controlPlane(), controllerPod);
    for (const name of [nodeA, nodeB]) await admin.deleteNode({ name }).catch(() => {});
    await install?.remove();
  });

  it("is refused node B's taint (403 naming the policy and both nodes), allowed node A's", async () => {
    const onB = await removeTaint(nodeB);
    expect(onB.status).to.equal(403);
    expect(onB.message).to.include(`ValidatingAdmissionPolicy '${install?.policy}'`);
    expect(onB.message).to.include(`of node ${nodeA} may not change the startup taints of node ${nodeB}`);
    expect(await taintKeys(nodeB)).to.include(ISTIO);

    const onA = await removeTaint(nodeA);
    expect(onA.status, onA.message).to.equal(200);
    expect(await taintKeys(nodeA)).to.not.include(ISTIO);
  });

  it("is refused every node with a token bound to no pod (it names no node)", async () => {
    const plane = controlPlane();
    const unbound = install?.as(await serviceAccountToken(plane, install.namespace, install.serviceAccount));
    if (!unbound || !install) throw new Error("not installed");
    try {
      const answer = await removeTaint(nodeB, unbound);
      expect(answer.status).to.equal(403);
      expect(answer.message).to.include("this token names no node");
      expect(await taintKeys(nodeB)).to.include(ISTIO);
    } finally {
      await unbound.close();
    }
  });
});
