// Beside Istio's own repair, against the real API server: the istio-cni-config ConfigMap (or the istio-cni-node
// DaemonSet's env) decides whether the istio rule deletes, holds a pod Istio can still fix in place, deletes it as
// Istio's fallback once the validator failed again late enough, or leaves it to an Istio that deletes or labels
// itself. Each change of the settings is picked up by the running controller. The audit log is the ground truth.

import { setTimeout as sleep } from "node:timers/promises";
import { AppsV1Api, CoreV1Api, EventsV1Api, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState, repairEvents } from "../../harness/broken-pods.js";
import { createCniAgent } from "../../harness/cni-agents.js";
import { ControllerProcess } from "../../harness/controller-process.js";
import { inClusterIdentity } from "../../harness/in-cluster.js";
import { validatorStatus, writePodStatus } from "../../harness/pod-fixtures.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest } from "../controller/start.js";

const NODE = "istio-node";
const MIN_READY_MS = 1_000;
/** Istio's repair grace beyond min-ready, 10 s (a literal: a grace changed by mistake must fail here). */
const ISTIO_REPAIR_GRACE_MS = 10_000;

describe("beside Istio's repair (istio-cni-config)", function () {
  this.timeout(120_000);
  const t = controllerTest();
  let api: CoreV1Api;
  let namespace: string;

  beforeEach(() => {
    ({ api, namespace } = t);
  });
  // Istio's objects are read cluster-wide by name wherever the namespace is not pinned: none may outlive its test.
  afterEach(async () => {
    await removeIstioObjects(namespace);
  });

  const deleted = () =>
    controllerDeletes(controlPlane().auditLogPath, namespace)
      .filter((e) => e.responseStatus?.code === 200)
      .map((e) => e.objectRef?.name ?? "");

  /** Istio's CNI agent on the node, Ready since then; each test writes (or withholds) Istio's settings itself. */
  const istioAgentReady = async (readySince: Date) =>
    await createCniAgent(api, { namespace, mesh: "istio", istioSettings: "own", nodeName: NODE, readySince });

  /** Istio's ConfigMap, as its chart writes it in the agent's namespace (here: the test's). */
  const writeConfigMap = async (data: Record<string, string>) => {
    const body = { metadata: { name: "istio-cni-config", namespace }, data };
    try {
      await api.replaceNamespacedConfigMap({ name: "istio-cni-config", namespace, body });
    } catch {
      await api.createNamespacedConfigMap({ namespace, body });
    }
  };

  /** The validator's status as the kubelet writes it after a failed run: crash loop, this run's finish time. */
  const failAt = async (name: string, finishedAt: Date, restarts: number) => {
    const validator = validatorStatus("istio-validation", { kind: "crashloop", exitCode: 126, restarts, finishedAt });
    await writePodStatus(api, { namespace, name }, { phase: "Pending", initContainerStatuses: [validator] });
  };

  /** A pod broken before the agent turned Ready: Istio's repair gets its chance when the agent is up. */
  const brokenBeforeAgent = async (name: string, agentReadyAt: number) => {
    await createPodInState(api, { namespace, name, nodeName: NODE });
    await failAt(name, new Date(agentReadyAt - 5_000), 2);
  };

  const start = async () =>
    await t.start([
      "--istio-repair=auto", // the controller tests' PLAIN flags leave Istio's settings unread
      "--cni-agent-gate=on",
      `--cni-agent-min-ready=${MIN_READY_MS}ms`,
      `--cni-agent-namespace=${namespace}`,
    ]);

  const held = (reason: string) => t.metric("cni_repair_pods_held", { reason });

  it("repairPods=true: holds a pod Istio can still fix, deletes it once a run started late enough failed; a Never pod at once", async () => {
    await writeConfigMap({ REPAIR_ENABLED: "true", REPAIR_REPAIR_PODS: "true" });
    const agentReadyAt = Date.now();
    await istioAgentReady(new Date(agentReadyAt));
    await brokenBeforeAgent("fixable", agentReadyAt);
    await createPodInState(
      api,
      { namespace, name: "one-shot", nodeName: NODE, restartPolicy: "Never" },
      { validator: { kind: "failed", exitCode: 126 } },
    );
    await start();
    expect(await t.metric("cni_repair_istio_repair_mode", { mode: "in_place" })).to.equal(1);

    await waitFor("the Never pod deleted", () => deleted().includes("one-shot"));
    await waitFor("the fixable pod held for Istio", async () => (await held("mesh_repair_pending")) === 1);

    // A run that started before the agent had been Ready for min-ready + the grace does not count either.
    const repairedBy = agentReadyAt + MIN_READY_MS + ISTIO_REPAIR_GRACE_MS;
    await failAt("fixable", new Date(agentReadyAt + MIN_READY_MS), 3);
    while (Date.now() <= repairedBy + 1_000) {
      expect(deleted(), "nothing but the Never pod deleted while Istio can fix it").to.deep.equal(["one-shot"]);
      await sleep(250);
    }
    expect(await held("mesh_repair_pending")).to.equal(1);

    // A validator run that started after the agent was Ready long enough fails: Istio's fix did not work.
    // The kubelet writes whole seconds.
    const again = new Date(Math.floor(Date.now() / 1000) * 1000);
    const startedWaiting = Date.now();
    await failAt("fixable", again, 4);
    await waitFor("the fallback delete", () => deleted().includes("fixable"));
    console.log(`      fallback delete ${Date.now() - startedWaiting} ms after writing the repeated failure`);
    expect(await t.metric("cni_repair_mesh_fallback_deletions_total", { basis: "failed_again" })).to.equal(1);
    expect(await t.metric("cni_repair_mesh_fallback_deletions_total", { basis: "never_restarts" })).to.equal(1);
    expect(await held("mesh_repair_pending")).to.equal(0);
    const { fallback } = await waitFor("the fallback Event", async () => {
      const note = (await eventNotes(namespace, "fixable")).find((text) => text.includes("Istio's fallback"));
      return note !== undefined && { fallback: note };
    });
    expect(fallback).to.include(`the validator's run 4, started at ${again.toISOString()}`);
    expect(fallback).to.include(
      `the CNI agent Ready since ${new Date(Math.floor(agentReadyAt / 1000) * 1000).toISOString()}`,
    );
    expect(await repairEvents(controlPlane(), namespace)).to.include("fixable:BrokenPodHeld");
  });

  it("a settings change applies within seconds, no restart: in place → Istio deletes (held) → repair off (deleted)", async () => {
    await writeConfigMap({ REPAIR_REPAIR_PODS: "true" });
    const agentReadyAt = Date.now();
    await istioAgentReady(new Date(agentReadyAt));
    await brokenBeforeAgent("waits", agentReadyAt);
    await start();
    await waitFor("held for Istio's in-place repair", async () => (await held("mesh_repair_pending")) === 1);

    let changed = Date.now();
    await writeConfigMap({ REPAIR_REPAIR_PODS: "false", REPAIR_DELETE_PODS: "true" });
    await waitFor("held while Istio deletes itself", async () => (await held("mesh_repair_active")) === 1, {
      timeoutMs: 5_000,
    });
    console.log(`      deletePods picked up in ${Date.now() - changed} ms`);
    expect(await t.metric("cni_repair_istio_repair_mode", { mode: "delete" })).to.equal(1);
    expect(await held("mesh_repair_pending")).to.equal(0);
    expect(t.controller.output()).to.include("Istio deletes broken pods itself");
    await sleep(1_000);
    expect(deleted()).to.deep.equal([]);

    changed = Date.now();
    await writeConfigMap({ REPAIR_ENABLED: "false", REPAIR_REPAIR_PODS: "false", REPAIR_DELETE_PODS: "true" });
    await waitFor("deleted once Istio's repair is off", () => deleted().includes("waits"), { timeoutMs: 5_000 });
    console.log(`      REPAIR_ENABLED=false picked up and acted on in ${Date.now() - changed} ms`);
    expect(await t.metric("cni_repair_istio_repair_mode", { mode: "off" })).to.equal(1);
    expect(await t.metric("cni_repair_mesh_fallback_deletions_total", { basis: "failed_again" })).to.equal(0);
  });

  it("Istio's agent running without a ConfigMap or REPAIR_* env: unknown, held as in place, warned", async () => {
    await istioAgentReady(new Date(Date.now() - 3_600_000));
    await createPodInState(api, { namespace, name: "looping", nodeName: NODE });
    await failAt("looping", new Date(Math.floor(Date.now() / 1000) * 1000), 1);
    await start();
    await waitFor("held as if Istio repairs in place", async () => (await held("mesh_repair_pending")) === 1);
    expect(await t.metric("cni_repair_istio_repair_mode", { mode: "unknown" })).to.equal(1);
    expect(t.controller.output().split("Istio's repair settings are unknown").length - 1, "warned once").to.equal(1);
    expect(t.controller.output()).to.include(`Istio's CNI agent runs in namespace ${namespace}`);
    await sleep(1_000);
    expect(deleted()).to.deep.equal([]);
  });

  it("no Istio agent and no settings anywhere (gate off): says Istio repair is not detected, and deletes as before", async () => {
    await createPodInState(api, { namespace, name: "plain", nodeName: NODE });
    await t.start(["--istio-repair=auto", "--cni-agent-gate=off", `--cni-agent-namespace=${namespace}`]);
    await waitFor("the delete", () => deleted().includes("plain"));
    expect(t.controller.logsWith("Istio repair not detected: the istio rule acts on its own")).to.have.length(1);
    expect(await t.metric("cni_repair_istio_repair_mode", { mode: "off" })).to.equal(1);
  });

  it("an older chart's DaemonSet env (labelPods) holds the pods; --istio-repair=ignore deletes them", async () => {
    await istioAgentReady(new Date(Date.now() - 3_600_000));
    await controlPlane()
      .kubeConfig()
      .makeApiClient(AppsV1Api)
      .createNamespacedDaemonSet({
        namespace,
        body: {
          metadata: { name: "istio-cni-node", namespace },
          spec: {
            selector: { matchLabels: { "k8s-app": "istio-cni-node" } },
            template: {
              metadata: { labels: { "k8s-app": "istio-cni-node" } },
              spec: {
                containers: [
                  {
                    name: "install-cni",
                    image: "registry.invalid/install-cni:1",
                    env: [
                      { name: "REPAIR_REPAIR_PODS", value: "false" },
                      { name: "REPAIR_LABEL_PODS", value: "true" },
                    ],
                  },
                ],
              },
            },
          },
        },
      });
    await createPodInState(api, { namespace, name: "labelled-by-istio", nodeName: NODE });
    await start();
    await waitFor("held while Istio labels it", async () => (await held("mesh_repair_active")) === 1);
    expect(await t.metric("cni_repair_istio_repair_mode", { mode: "label" })).to.equal(1);
    await sleep(1_000);
    expect(deleted()).to.deep.equal([]);
    expect(await t.controller.stop()).to.equal(0);

    await t.start([
      "--istio-repair=ignore",
      "--cni-agent-gate=on",
      `--cni-agent-min-ready=${MIN_READY_MS}ms`,
      `--cni-agent-namespace=${namespace}`,
    ]);
    await waitFor("deleted with --istio-repair=ignore", () => deleted().includes("labelled-by-istio"));
  });

  it("least privilege: a Role with resourceNames lets the controller list and watch the settings by name; without it, a warning and pods held as if Istio repairs in place", async () => {
    await writeConfigMap({ REPAIR_REPAIR_PODS: "false", REPAIR_DELETE_PODS: "true" });
    const agentReadyAt = Date.now();
    await istioAgentReady(new Date(agentReadyAt));
    await brokenBeforeAgent("guarded", agentReadyAt);
    const identity = await inClusterIdentity(controlPlane(), namespace, "restricted", [
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch", "delete"] },
      { apiGroups: [""], resources: ["pods/status"], verbs: ["patch"] },
      { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create"] },
    ]);
    const args = [
      `--field-selector=metadata.namespace=${namespace}`,
      "--leader-elect=false",
      "--cni-agent-gate=on",
      `--cni-agent-min-ready=${MIN_READY_MS}ms`,
      `--cni-agent-namespace=${namespace}`,
    ];
    // No Role: the read is refused. Held as in place (the failure predates the agent), and said so.
    const refused = t.adopt(await ControllerProcess.start({ args, env: identity.env }));
    await waitFor("held as if Istio repaired in place", async () => (await held("mesh_repair_pending")) === 1);
    expect(await t.metric("cni_repair_istio_repair_mode", { mode: "unknown" })).to.equal(1);
    expect(refused.output()).to.include("cannot read Istio's repair settings");
    expect(refused.output(), "the rules to grant, in the warning").to.include(
      `rules to add to a Role in namespace ${namespace}`,
    );
    expect(refused.output().split("Istio's repair settings are unknown").length - 1, "warned once").to.equal(1);
    expect(await refused.stop()).to.equal(0);

    // The chart's Role: get, list, watch on the two objects by name only. The running read then sees the ConfigMap.
    const rbac = controlPlane().kubeConfig().makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name: "istio-repair" },
        rules: [
          {
            apiGroups: [""],
            resources: ["configmaps"],
            resourceNames: ["istio-cni-config"],
            verbs: ["get", "list", "watch"],
          },
          {
            apiGroups: ["apps"],
            resources: ["daemonsets"],
            resourceNames: ["istio-cni-node"],
            verbs: ["get", "list", "watch"],
          },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: "istio-repair" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "istio-repair" },
        subjects: [{ kind: "ServiceAccount", name: "restricted", namespace }],
      },
    });
    const granted = t.adopt(await ControllerProcess.start({ args, env: identity.env }));
    await waitFor("the settings read by name", async () => (await held("mesh_repair_active")) === 1, {
      timeoutMs: 15_000,
    });
    expect(await t.metric("cni_repair_istio_repair_mode", { mode: "delete" })).to.equal(1);
    expect(granted.output()).to.not.include("cannot read Istio's repair settings");
    // Nothing refused: the list and the watch with a metadata.name field selector passed on resourceNames alone.
    const { body } = await granted.get("/metrics");
    expect(
      body
        .split("\n")
        .filter((line) => /^cni_repair_api_requests_total\{.*code="403"/.test(line) && !line.endsWith(" 0")),
    ).to.deep.equal([]);
    expect(deleted()).to.deep.equal([]);
    expect(await granted.stop()).to.equal(0);
    identity.cleanup();
  });
});

/** Deletes the namespace's istio-cni-config, istio-cni-node DaemonSet and agent pods, at once. */
async function removeIstioObjects(namespace: string): Promise<void> {
  const kubeConfig = controlPlane().kubeConfig();
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const gone = async (request: Promise<unknown>) => await request.catch(() => undefined);
  await gone(core.deleteNamespacedConfigMap({ namespace, name: "istio-cni-config" }));
  await gone(kubeConfig.makeApiClient(AppsV1Api).deleteNamespacedDaemonSet({ namespace, name: "istio-cni-node" }));
  await gone(
    core.deleteCollectionNamespacedPod({ namespace, labelSelector: "k8s-app=istio-cni-node", gracePeriodSeconds: 0 }),
  );
}

/** The notes of the Events about one pod. */
async function eventNotes(namespace: string, pod: string): Promise<string[]> {
  const events = controlPlane().kubeConfig().makeApiClient(EventsV1Api);
  const list = await events.listNamespacedEvent({ namespace });
  return list.items.filter((event) => event.regarding?.name === pod).map((event) => event.note ?? "");
}
