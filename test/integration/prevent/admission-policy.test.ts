// The chart's ValidatingAdmissionPolicy for startup taints, on the real API server, in each startup-taint mode: as
// the controller's service account (a TokenRequest token, RBAC from the same rendering), removing the configured key
// passes in both; adding it passes only in continuous mode (NoSchedule only) and is refused in bootstrap-only mode,
// which never adds taints; any other taint, a label or another spec field is refused with 403 naming the policy.
import { randomBytes } from "node:crypto";
import { CoreV1Api, type V1Taint } from "@kubernetes/client-node";
import { expect } from "chai";
import type { StartupTaintMode } from "../../../src/config/startup-taint.js";
import { toNodeFacts } from "../../../src/informer/node-facts.js";
import { ApiError } from "../../../src/kube/api-error.js";
import type { KubeTransport } from "../../../src/kube/transport.js";
import { patchTaints } from "../../../src/prevent/taint-patcher.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { serviceAccountToken } from "../../harness/service-account-files.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { installTaintPolicy, type TaintPolicyInstall } from "./taint-policy-install.js";

const ISTIO = "cni.istio.io/not-ready";

for (const startupTaintMode of ["bootstrap-only", "continuous"] as const satisfies readonly StartupTaintMode[]) {
  describe(`startup taints: the admission policy, ${startupTaintMode}`, function () {
    this.timeout(120_000);
    let admin: CoreV1Api;
    let asController: KubeTransport;
    let policy: string;
    let node: string;
    let install: TaintPolicyInstall | undefined;

    before(async () => {
      const plane = controlPlane();
      admin = plane.kubeConfig().makeApiClient(CoreV1Api);
      install = await installTaintPolicy(plane, await createTestNamespace(admin), "cluster", startupTaintMode);
      policy = install.policy;
      asController = install.as(await serviceAccountToken(plane, install.namespace, install.serviceAccount));
      node = `vap-${randomBytes(4).toString("hex")}`;
      await admin.createNode({
        body: {
          metadata: { name: node, labels: { "cni-repair.test/owned": "true" } },
          spec: {
            taints: [
              { key: ISTIO, effect: "NoSchedule" },
              { key: "dedicated", value: "gpu", effect: "NoSchedule" },
            ],
          },
        },
      });
      // A new policy takes a moment to be enforced (the API server loads it in the background): wait until a label
      // change is refused.
      await waitFor(
        "the policy to be enforced",
        // A new value each time: a patch that changes nothing is not judged by admission at all.
        async () =>
          (await attempt([{ op: "add", path: "/metadata/labels/probe", value: `p${Date.now()}` }])).status === 403,
        {
          timeoutMs: 30_000,
          intervalMs: 300,
        },
      );
    });

    after(async () => {
      await asController?.close();
      await admin.deleteNode({ name: node }).catch(() => {});
      await install?.remove();
    });

    /** A JSON patch of the node as the controller; the status (and message) the server answered. */
    const attempt = async (ops: unknown[]): Promise<{ status: number; message: string }> => {
      try {
        await asController.request("patch", "PATCH", `/api/v1/nodes/${node}`, {
          body: ops,
          contentType: "application/json-patch+json",
        });
        return { status: 200, message: "" };
      } catch (error) {
        if (error instanceof ApiError) return { status: error.status, message: error.message };
        throw error;
      }
    };
    const taints = async (): Promise<V1Taint[]> => (await admin.readNode({ name: node })).spec?.taints ?? [];
    const withTaints = async (next: V1Taint[]) => [
      { op: "test", path: "/spec/taints", value: await taints() },
      { op: "replace", path: "/spec/taints", value: next },
    ];
    /** Refused by the policy's own rule (its message), not by an expression that failed to evaluate. */
    const expectRefused = async (ops: unknown[], because: string, says: string) => {
      const answer = await attempt(ops);
      expect(answer.status, because).to.equal(403);
      expect(answer.message).to.include(`ValidatingAdmissionPolicy '${policy}'`);
      expect(answer.message, because).to.include(says);
    };

    const read = async () => {
      const facts = toNodeFacts(await admin.readNode({ name: node }));
      if (!facts) throw new Error("node unreadable");
      return facts;
    };

    /** The controller's own patcher, removing the key: the one change both modes make. Returns the node after it. */
    const removeKey = async () => {
      const removed = await patchTaints(asController, await read(), { kind: "remove", keys: [ISTIO] });
      expect(removed.kind).to.equal("patched");
      expect((await taints()).map((t) => t.key)).to.not.include(ISTIO);
      return await read();
    };

    if (startupTaintMode === "continuous") {
      it("allows removing and adding back the configured key (the controller's own patcher)", async () => {
        const added = await patchTaints(asController, await removeKey(), { kind: "add", key: ISTIO });
        expect(added.kind).to.equal("patched");
        expect((await taints()).find((t) => t.key === ISTIO)?.effect).to.equal("NoSchedule");
      });

      it("refuses the configured key with NoExecute", async () => {
        const others = (await taints()).filter((t) => t.key !== ISTIO);
        await expectRefused(
          await withTaints([...others, { key: ISTIO, effect: "NoExecute" }]),
          "NoExecute",
          "must have the effect NoSchedule",
        );
      });
    } else {
      it("allows removing the configured key, refuses adding it back, even NoSchedule (403 naming the policy)", async () => {
        const removed = await removeKey();
        const added = await patchTaints(asController, removed, { kind: "add", key: ISTIO }).catch(
          (error: unknown) => error,
        );
        expect(added).to.be.instanceOf(ApiError);
        expect((added as ApiError).status).to.equal(403);
        expect((added as ApiError).message).to.include(`ValidatingAdmissionPolicy '${policy}'`);
        expect((added as ApiError).message).to.include(
          `in bootstrap-only mode the startup taints ${ISTIO} may only be removed`,
        );
        expect((await taints()).map((t) => t.key)).to.not.include(ISTIO);
        await expectRefused(
          await withTaints([...(await taints()), { key: ISTIO, effect: "NoExecute" }]),
          "adding it NoExecute",
          "may only be removed",
        );
      });

      it("refuses changing the configured key in place (its value or effect)", async () => {
        // The admin puts it back (as a kubelet registering the node would), then the token tries to change it.
        const others = (await taints()).filter((t) => t.key !== ISTIO);
        await admin.patchNode({
          name: node,
          body: [{ op: "replace", path: "/spec/taints", value: [...others, { key: ISTIO, effect: "NoSchedule" }] }],
        });
        await expectRefused(
          await withTaints([...others, { key: ISTIO, value: "true", effect: "NoSchedule" }]),
          "a new value",
          "may only be removed",
        );
        await expectRefused(
          await withTaints([...others, { key: ISTIO, effect: "NoExecute" }]),
          "a new effect",
          "may only be removed",
        );
      });
    }

    it("refuses a change to any other taint: adding, removing, or changing one", async () => {
      const current = await taints();
      await expectRefused(
        await withTaints([...current, { key: "other", effect: "NoSchedule" }]),
        "adding another taint",
        "other taints must stay as they are",
      );
      await expectRefused(
        await withTaints(current.filter((t) => t.key !== "dedicated")),
        "removing another taint",
        "other taints must stay as they are",
      );
      await expectRefused(
        await withTaints(current.map((t) => (t.key === "dedicated" ? { ...t, value: "cpu" } : t))),
        "changing another taint's value",
        "other taints must stay as they are",
      );
    });

    it("refuses a label, an annotation, and any other spec field", async () => {
      await expectRefused([{ op: "add", path: "/metadata/labels/team", value: "x" }], "a label", "labels, annotations");
      await expectRefused(
        [{ op: "add", path: "/metadata/annotations", value: { note: "x" } }],
        "an annotation",
        "labels, annotations",
      );
      await expectRefused(
        [{ op: "add", path: "/spec/unschedulable", value: true }],
        "cordoning",
        "nothing in a Node's spec",
      );
      await expectRefused(
        [{ op: "add", path: "/spec/providerID", value: "fake://x" }],
        "the provider ID",
        "nothing in a Node's spec",
      );
    });

    it("does not bind anyone else: the admin may still label the node", async () => {
      await admin.patchNode({ name: node, body: [{ op: "add", path: "/metadata/labels/team", value: "admin" }] });
      expect((await admin.readNode({ name: node })).metadata?.labels?.team).to.equal("admin");
    });
  });
}
