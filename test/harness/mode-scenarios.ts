// What each mode's controller must do with nothing but the permissions its install grants, run "in-cluster" with a
// TokenRequest token of its ServiceAccount and the args and env of its workload (plus a namespace field selector and
// a free port, for the test). Shared by the kustomize overlay tests and the Helm chart's upgrade test.
import { CoordinationV1Api, CoreV1Api, type V1Container } from "@kubernetes/client-node";
import { expect } from "chai";
import { documentedLeaderPod } from "../docs/runbook-commands.js";
import { podRequests } from "./audit-log.js";
import { createPodInState, repairEvents } from "./broken-pods.js";
import { createCniAgent } from "./cni-agents.js";
import type { ControlPlane } from "./control-plane.js";
import { createControllerPod, deleteControllerPod } from "./controller-pod.js";
import { ControllerProcess } from "./controller-process.js";
import { INSTALL, type Overlay, podCommand } from "./overlays.js";
import { inClusterAs } from "./service-account-files.js";
import { waitFor } from "./wait.js";

const LABEL = "cni.istio.io/uninitialized";

export type InClusterRun = {
  readonly controller: ControllerProcess;
  /** Stops the controller (SIGTERM) and removes its service-account files; its exit code. */
  stop(): Promise<number | null>;
};

/**
 * The suite's in-cluster controller runs: `start` starts one (as startInCluster) and keeps it; after each test the
 * kept run is stopped and must exit 0, its output printed first when the test failed. `stop` ends it mid-test.
 */
export function inClusterRuns() {
  let current: InClusterRun | undefined;
  const stop = async (): Promise<number | null> => {
    const run = current;
    current = undefined;
    return run ? await run.stop() : 0;
  };
  afterEach(async function () {
    if (this.currentTest?.state === "failed") console.log(current?.controller.output());
    expect(await stop()).to.equal(0);
  });
  return {
    start: async (...args: Parameters<typeof startInCluster>): Promise<InClusterRun> => {
      current = await startInCluster(...args);
      return current;
    },
    stop,
  };
}

/**
 * The install's ServiceAccount as a pod of the workload on the node has it: that pod (created, never started) and a
 * token bound to it, as the kubelet projects it (so it names the node), with the CA and namespace file.
 */
export async function installedPodIdentity(
  plane: ControlPlane,
  placement: { nodeName: string; podName: string },
): Promise<{ env: Record<string, string>; cleanup(): Promise<void> }> {
  const pod = await createControllerPod(plane, {
    namespace: INSTALL.namespace,
    serviceAccount: INSTALL.serviceAccount,
    ...placement,
  });
  const identity = await inClusterAs(plane, INSTALL.namespace, INSTALL.serviceAccount, pod);
  return {
    env: identity.env,
    cleanup: async () => {
      identity.cleanup();
      await deleteControllerPod(plane, pod);
    },
  };
}

/**
 * The started controller is the install's ServiceAccount, and its startup self-checks passed: every permission the
 * mode needs (SelfSubjectAccessReviews), and the admission policies of the install in force (or warned about).
 */
export function expectInstalledIdentity(
  controller: ControllerProcess,
  expected: { admissionPolicies: "checked" | "warned" } = { admissionPolicies: "checked" },
): void {
  expect(controller.logsWith("connected")[0]?.identity).to.equal(
    `system:serviceaccount:${INSTALL.namespace}:${INSTALL.serviceAccount}`,
  );
  expect(controller.logsWith("permissions checked")).to.have.length(1);
  expect(controller.logsWith("admission policies checked")).to.have.length(
    expected.admissionPolicies === "checked" ? 1 : 0,
  );
}

/**
 * Starts the controller as a pod of the workload would run on the node: the container's args and env (downward API
 * resolved) and the installed pod's identity (installedPodIdentity). Checks who it is and that its self-checks passed.
 */
export async function startInCluster(
  plane: ControlPlane,
  container: V1Container,
  placement: { nodeName: string; podName: string },
  watchNamespace: string,
  /** What the startup check must have said of the admission policies: all in force (default), or warned. */
  expected: { admissionPolicies: "checked" | "warned" } = { admissionPolicies: "checked" },
): Promise<InClusterRun> {
  const { args, env, nodeFlags } = podCommand(container, { namespace: INSTALL.namespace, ...placement });
  const identity = await installedPodIdentity(plane, placement);
  const controller = await ControllerProcess.start({
    args: [...args, `--field-selector=metadata.namespace=${watchNamespace}`, "--http-port=0"],
    env: { ...env, ...identity.env },
    nodeFlags,
  }).catch(async (error: unknown) => {
    await identity.cleanup();
    throw error;
  });
  const run = {
    controller,
    stop: async () => {
      try {
        return await controller.stop();
      } finally {
        await identity.cleanup();
      }
    },
  };
  expectInstalledIdentity(controller, expected);
  return run;
}

/** A test namespace's broken pods and the controller started for one mode on one node. */
export type ScenarioContext = {
  readonly plane: ControlPlane;
  readonly namespace: string;
  /** Starts the mode's controller as its pod on this node, named so the Lease shows it. */
  start(nodeName: string, podName: string): Promise<ControllerProcess>;
};

/** The mode's job: cluster deletes and labels bare pods; label-only labels; dry-run reports; per-node its node only. */
export async function runModeScenario(mode: Overlay, context: ScenarioContext): Promise<void> {
  const { plane, namespace } = context;
  const api = plane.kubeConfig().makeApiClient(CoreV1Api);
  const podName = `cni-repair-${mode}-0`;
  /** Node names of this test only: other tests' CNI agents (Ready or not) live on other nodes. */
  const node = (suffix: string) => `${namespace}-${suffix}`;
  /** The Istio CNI agent on the node, Ready for an hour: the readiness gate lets repairs there through. */
  const readyAgent = async (nodeName: string) =>
    await createCniAgent(api, { namespace, mesh: "istio", nodeName, readySince: new Date(Date.now() - 3_600_000) });
  const labelOf = async (name: string) => (await api.readNamespacedPod({ namespace, name })).metadata?.labels?.[LABEL];
  const controllerRequests = (verb: string) =>
    podRequests(plane.auditLogPath, namespace).filter(
      (event) => event.verb === verb && (event.userAgent ?? "").startsWith("cni-repair/"),
    );
  /** Leases in the controller's namespace, as "name:holder" (holder "" when free). */
  const leases = async () => {
    const coordination = plane.kubeConfig().makeApiClient(CoordinationV1Api);
    const list = await coordination.listNamespacedLease({ namespace: INSTALL.namespace });
    return list.items.map((lease) => `${lease.metadata?.name}:${lease.spec?.holderIdentity ?? ""}`);
  };
  /**
   * The elector's identity is the pod name from the downward API (POD_NAME) plus a random suffix, and the runbooks'
   * way of finding the leader's pod from the Lease holder (docs/runbooks.md, run as written) finds this pod.
   */
  const waitForLeader = async () =>
    await waitFor(
      "the lease",
      async () =>
        (await leases()).some(
          (lease) =>
            lease.startsWith(`cni-repair:${podName}_`) &&
            documentedLeaderPod(lease.slice("cni-repair:".length)) === podName,
        ),
      { timeoutMs: 20_000 },
    );
  /** Requests the API server refused with 403: what the permissions did not cover. */
  const forbidden = async (running: ControllerProcess) => {
    const { body } = await running.get("/metrics");
    return body
      .split("\n")
      .filter(
        (line) => line.startsWith("cni_repair_api_requests_total{") && /code="403"/.test(line) && !line.endsWith(" 0"),
      );
  };

  // The agent comes with Istio's settings (repair off), read by name through the access the mode grants.
  await readyAgent(node("a"));
  if (mode === "per-node") await readyAgent(node("b"));
  const running = await context.start(node("a"), podName);
  if (mode !== "per-node") await waitForLeader();

  switch (mode) {
    case "cluster": {
      await createPodInState(api, { namespace, name: "broken", nodeName: node("a") });
      await createPodInState(api, { namespace, name: "bare", nodeName: node("a"), bare: true });
      await waitFor("the delete", () => controllerRequests("delete").length === 1, { timeoutMs: 20_000 });
      const [deleted] = controllerRequests("delete");
      expect(deleted?.objectRef?.name).to.equal("broken");
      expect(deleted?.responseStatus?.code).to.equal(200);
      await waitFor("the bare pod's label", async () => (await labelOf("bare")) === "true");
      await waitFor("the Events", async () =>
        (await repairEvents(plane, namespace)).includes("broken:BrokenPodDeleted"),
      );
      expect(controllerRequests("delete").map((event) => event.objectRef?.name)).to.deep.equal(["broken"]);
      break;
    }
    case "label-only": {
      await createPodInState(api, { namespace, name: "broken", nodeName: node("a") });
      await waitFor("the label", async () => (await labelOf("broken")) === "true", { timeoutMs: 20_000 });
      const [patch] = controllerRequests("patch");
      expect(patch?.objectRef).to.include({ name: "broken", subresource: "status" });
      expect(controllerRequests("delete")).to.deep.equal([]);
      const pod = await api.readNamespacedPod({ namespace, name: "broken" });
      expect(pod.metadata?.deletionTimestamp).to.equal(undefined);
      break;
    }
    case "dry-run": {
      await createPodInState(api, { namespace, name: "broken", nodeName: node("a") });
      await waitFor(
        "the dry-run report",
        async () =>
          (await running.metric("cni_repair_pods_repaired_total", { type: "report", result: "dry_run" })) === 1,
        { timeoutMs: 20_000 },
      );
      const [request] = controllerRequests("delete");
      expect(request?.responseStatus?.code).to.equal(200);
      expect(request?.requestObject).to.deep.include({ dryRun: ["All"] });
      const pod = await api.readNamespacedPod({ namespace, name: "broken" });
      expect(pod.metadata?.deletionTimestamp).to.equal(undefined);
      expect(pod.metadata?.labels?.[LABEL]).to.equal(undefined);
      break;
    }
    case "per-node": {
      await createPodInState(api, { namespace, name: "broken-here", nodeName: node("a") });
      await createPodInState(api, { namespace, name: "broken-elsewhere", nodeName: node("b") });
      await waitFor("the delete", () => controllerRequests("delete").length === 1, { timeoutMs: 20_000 });
      expect(controllerRequests("delete")[0]?.objectRef?.name).to.equal("broken-here");
      // Only its node's pods (the agent and broken-here) are listed and watched: the other node's never arrive.
      expect(await running.metric("cni_repair_cache_pods")).to.equal(2);
      expect((await leases()).filter((lease) => lease.includes(podName))).to.deep.equal([]);
      expect(controllerRequests("delete").map((event) => event.objectRef?.name)).to.deep.equal(["broken-here"]);
      break;
    }
  }
  expect(await forbidden(running)).to.deep.equal([]);
  // Istio's repair settings were read (by name, through the access the mode grants), not refused: repair off.
  expect(await running.metric("cni_repair_istio_repair_mode", { mode: "off" })).to.equal(1);
}
