// Each overlay's controller does its job with nothing but the permissions its manifests grant: installed with
// server-side apply, run "in-cluster" with a TokenRequest token of its ServiceAccount and the args and env of its
// rendered workload (plus a namespace field selector and a free port, for the test).
import { CoordinationV1Api, CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { podRequests } from "../../harness/audit-log.js";
import { createPodInState, repairEvents } from "../../harness/broken-pods.js";
import { createCniAgent } from "../../harness/cni-agents.js";
import { ControllerProcess } from "../../harness/controller-process.js";
import type { InCluster } from "../../harness/in-cluster.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import {
  controllerContainer,
  INSTALL,
  installOverlay,
  type Overlay,
  podCommand,
  uninstall,
} from "../../harness/overlays.js";
import { inClusterAs } from "../../harness/service-account-files.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";

const LABEL = "cni.istio.io/uninitialized";

describe("manifests: each overlay's controller in-cluster, with only its own permissions", () => {
  let api: CoreV1Api;
  let namespace: string;
  let identity: InCluster | undefined;
  let controller: ControllerProcess | undefined;

  beforeEach(async () => {
    api = controlPlane().kubeConfig().makeApiClient(CoreV1Api);
    namespace = await createTestNamespace(api, "m");
  });

  afterEach(async function () {
    if (this.currentTest?.state === "failed") console.log(controller?.output());
    if (controller) expect(await controller.stop()).to.equal(0);
    controller = undefined;
    identity?.cleanup();
  });

  after(async () => {
    await uninstall(controlPlane());
  });

  /** Installs the overlay and starts its controller as a pod of its workload on the node would run. */
  const runAs = async (overlay: Overlay, nodeName: string) => {
    const plane = controlPlane();
    const { rendered } = await installOverlay(plane, overlay);
    const { args, env } = podCommand(controllerContainer(rendered), {
      namespace: INSTALL.namespace,
      nodeName,
      podName: `cni-repair-${overlay}-0`,
    });
    identity = await inClusterAs(plane, INSTALL.namespace, INSTALL.serviceAccount);
    controller = await ControllerProcess.start({
      args: [...args, `--field-selector=metadata.namespace=${namespace}`, "--http-port=0"],
      env: { ...env, ...identity.env },
    });
    expect(controller.logsWith("connected")[0]?.identity).to.equal(
      `system:serviceaccount:${INSTALL.namespace}:${INSTALL.serviceAccount}`,
    );
    // The startup self-check (SelfSubjectAccessReviews) found every permission the mode needs.
    expect(controller.logsWith("permissions checked")).to.have.length(1);
    return controller;
  };

  const controllerRequests = (verb: string) =>
    podRequests(controlPlane().auditLogPath, namespace).filter(
      (event) => event.verb === verb && (event.userAgent ?? "").startsWith("cni-repair/"),
    );

  /** Node names of this test only: other tests' CNI agents (Ready or not) live on other nodes. */
  const node = (suffix: string) => `${namespace}-${suffix}`;

  /** The Istio CNI agent on the node, Ready for an hour: the readiness gate lets repairs there through. */
  const readyAgent = async (nodeName: string) =>
    await createCniAgent(api, { namespace, mesh: "istio", nodeName, readySince: new Date(Date.now() - 3_600_000) });

  const labelOf = async (name: string) => (await api.readNamespacedPod({ namespace, name })).metadata?.labels?.[LABEL];

  /** Leases in the controller's namespace, as "name:holder" (holder "" when free). */
  const leases = async () => {
    const coordination = controlPlane().kubeConfig().makeApiClient(CoordinationV1Api);
    const list = await coordination.listNamespacedLease({ namespace: INSTALL.namespace });
    return list.items.map((lease) => `${lease.metadata?.name}:${lease.spec?.holderIdentity ?? ""}`);
  };

  /** The elector's identity is the pod name from the downward API (POD_NAME) plus a random suffix. */
  const waitForLeader = async (overlay: Overlay) =>
    await waitFor(
      "the lease",
      async () => (await leases()).some((lease) => lease.startsWith(`cni-repair:cni-repair-${overlay}-0_`)),
      { timeoutMs: 20_000 },
    );

  /** Requests the API server refused with 403, by verb: what the permissions did not cover. */
  const forbidden = async (running: ControllerProcess) => {
    const { body } = await running.get("/metrics");
    return body
      .split("\n")
      .filter(
        (line) => line.startsWith("cni_repair_api_requests_total{") && /code="403"/.test(line) && !line.endsWith(" 0"),
      );
  };

  it("cluster: elects a leader, deletes the broken pod, labels the bare one; nothing is refused", async () => {
    await readyAgent(node("a"));
    const running = await runAs("cluster", node("a"));
    await waitForLeader("cluster");
    await createPodInState(api, { namespace, name: "broken", nodeName: node("a") });
    await createPodInState(api, { namespace, name: "bare", nodeName: node("a"), bare: true });

    await waitFor("the delete", () => controllerRequests("delete").length === 1, { timeoutMs: 20_000 });
    const [deleted] = controllerRequests("delete");
    expect(deleted?.objectRef?.name).to.equal("broken");
    expect(deleted?.responseStatus?.code).to.equal(200);
    await waitFor("the bare pod's label", async () => (await labelOf("bare")) === "true");
    await waitFor("the Events", async () =>
      (await repairEvents(controlPlane(), namespace)).includes("broken:BrokenPodDeleted"),
    );
    expect(controllerRequests("delete").map((event) => event.objectRef?.name)).to.deep.equal(["broken"]);
    expect(await forbidden(running)).to.deep.equal([]);
  });

  it("label-only: labels the broken pod through pods/status and deletes nothing; nothing is refused", async () => {
    await readyAgent(node("a"));
    const running = await runAs("label-only", node("a"));
    await waitForLeader("label-only");
    await createPodInState(api, { namespace, name: "broken", nodeName: node("a") });

    await waitFor("the label", async () => (await labelOf("broken")) === "true", { timeoutMs: 20_000 });
    const [patch] = controllerRequests("patch");
    expect(patch?.objectRef).to.include({ name: "broken", subresource: "status" });
    expect(controllerRequests("delete")).to.deep.equal([]);
    expect((await api.readNamespacedPod({ namespace, name: "broken" })).metadata?.deletionTimestamp).to.equal(
      undefined,
    );
    expect(await forbidden(running)).to.deep.equal([]);
  });

  it("dry-run: reports the broken pod with a dry-run delete and changes nothing; nothing is refused", async () => {
    await readyAgent(node("a"));
    const running = await runAs("dry-run", node("a"));
    await waitForLeader("dry-run");
    await createPodInState(api, { namespace, name: "broken", nodeName: node("a") });

    await waitFor(
      "the dry-run report",
      async () => (await running.metric("cni_repair_pods_repaired_total", { type: "report", result: "dry_run" })) === 1,
      { timeoutMs: 20_000 },
    );
    const [request] = controllerRequests("delete");
    expect(request?.responseStatus?.code).to.equal(200);
    expect(request?.requestObject).to.deep.include({ dryRun: ["All"] });
    const pod = await api.readNamespacedPod({ namespace, name: "broken" });
    expect(pod.metadata?.deletionTimestamp).to.equal(undefined);
    expect(pod.metadata?.labels?.[LABEL]).to.equal(undefined);
    expect(await forbidden(running)).to.deep.equal([]);
  });

  it("per-node: repairs only its node's pods, elects nothing; nothing is refused", async () => {
    await readyAgent(node("a"));
    await readyAgent(node("b"));
    const running = await runAs("per-node", node("a"));
    await createPodInState(api, { namespace, name: "broken-here", nodeName: node("a") });
    await createPodInState(api, { namespace, name: "broken-elsewhere", nodeName: node("b") });

    await waitFor("the delete", () => controllerRequests("delete").length === 1, { timeoutMs: 20_000 });
    expect(controllerRequests("delete")[0]?.objectRef?.name).to.equal("broken-here");
    // Only its node's pods (the agent and broken-here) are listed and watched: the other node's never arrive.
    expect(await running.metric("cni_repair_cache_pods")).to.equal(2);
    expect(await leases()).to.deep.equal([]);
    expect(controllerRequests("delete").map((event) => event.objectRef?.name)).to.deep.equal(["broken-here"]);
    expect(await forbidden(running)).to.deep.equal([]);
  });
});
