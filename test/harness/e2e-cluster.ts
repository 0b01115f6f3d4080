// A small but complete cluster for end-to-end tests: a ControlPlane (etcd, kube-apiserver with its audit log,
// ServiceAccount admission on), kube-controller-manager, kube-scheduler, kwok's fake nodes that run pods, and the
// CNI simulator that breaks the pods starting on a node whose mesh CNI agent is down.
import { randomBytes } from "node:crypto";
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Taint } from "@kubernetes/client-node";
import { clusterBinaries } from "./cluster-binaries.js";
import { agentName, createCniAgent, setCniAgentNotReady, setCniAgentReady } from "./cni-agents.js";
import { CniSimulator } from "./cni-simulator.js";
import { ControlPlane } from "./control-plane.js";
import { KWOK_NODE_ANNOTATION, startControllerManager, startKwok, startScheduler } from "./kube-components.js";
import type { ManagedProcess } from "./managed-process.js";
import { waitFor } from "./wait.js";

export type E2eClusterOptions = {
  /** Node names; three by default. */
  readonly nodes?: readonly string[];
  /** How often a broken validator fails again (a new status each time); see CniSimulator. */
  readonly restartLoopMs?: number;
};

export class E2eCluster {
  readonly plane: ControlPlane;
  readonly nodes: readonly string[];
  readonly cni: CniSimulator;
  readonly api: CoreV1Api;
  readonly #components: ManagedProcess[];

  private constructor(plane: ControlPlane, nodes: readonly string[], cni: CniSimulator, components: ManagedProcess[]) {
    this.plane = plane;
    this.nodes = nodes;
    this.cni = cni;
    this.api = plane.kubeConfig().makeApiClient(CoreV1Api);
    this.#components = components;
  }

  /** Starts everything and waits until the nodes are Ready and the controller-manager is at work. */
  static async start(options: E2eClusterOptions = {}): Promise<E2eCluster> {
    const binaries = clusterBinaries();
    const nodes = options.nodes ?? ["node-a", "node-b", "node-c"];
    const plane = await ControlPlane.start({ serviceAccountAdmission: true });
    const components: ManagedProcess[] = [];
    let cni: CniSimulator | undefined;
    try {
      components.push(startControllerManager(plane, binaries), startScheduler(plane, binaries));
      components.push(await startKwok(plane, binaries));
      const api = plane.kubeConfig().makeApiClient(CoreV1Api);
      for (const node of nodes) await createNode(api, node);
      await waitFor(
        "kwok to make the nodes Ready",
        async () => {
          for (const component of components) if (!component.running) throw new Error(diedMessage(component));
          const list = await api.listNode();
          const ready = list.items.filter((node) =>
            node.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
          );
          return ready.length === nodes.length;
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      await waitForDefaultServiceAccount(api, "default");
      cni = CniSimulator.start(plane.kubeConfig(), { restartLoopMs: options.restartLoopMs ?? 3_000 });
      return new E2eCluster(plane, nodes, cni, components);
    } catch (error) {
      await cni?.stop();
      for (const component of components) await component.stop();
      await plane.stop();
      throw error;
    }
  }

  /** A fresh namespace, ready for pods (its "default" ServiceAccount exists). */
  async createNamespace(prefix = "e2e"): Promise<string> {
    const name = `${prefix}-${randomBytes(4).toString("hex")}`;
    await this.api.createNamespace({ body: { metadata: { name, labels: { "cni-repair.test/owned": "true" } } } });
    await waitForDefaultServiceAccount(this.api, name);
    return name;
  }

  /** One Istio CNI agent pod per node in the namespace, Ready or not, and the nodes' CNI to match. */
  async createCniAgents(namespace: string, down: readonly string[], nodes = this.nodes): Promise<void> {
    for (const node of nodes) {
      const ready = !down.includes(node);
      this.cni.setNode(node, ready ? "ready" : "down");
      await createCniAgent(this.api, {
        namespace,
        mesh: "istio",
        nodeName: node,
        ...(ready && { readySince: new Date(Date.now() - 60_000) }),
      });
    }
  }

  /** The node's agent turns NotReady (crashed): pods whose sandbox is set up from now on break. */
  async setCniAgentNotReady(namespace: string, node: string): Promise<void> {
    this.cni.setNode(node, "down");
    await setCniAgentNotReady(this.api, { namespace, name: agentName("istio", node) });
  }

  /** The node's agent turns Ready: pods whose sandbox is set up from now on work. */
  async setCniAgentReady(namespace: string, node: string): Promise<void> {
    this.cni.setNode(node, "ready");
    await setCniAgentReady(this.api, { namespace, name: agentName("istio", node) }, new Date());
  }

  /**
   * Registers one more kwok node, as a node pool would: with these labels and these taints (a kubelet's
   * --register-with-taints), and waits until it is Ready. Not one of `nodes` (the three every test starts with).
   */
  async addNode(name: string, options: { labels?: Record<string, string>; taints?: V1Taint[] } = {}): Promise<void> {
    await createNode(this.api, name, options);
    await waitFor(
      `kwok to make node ${name} Ready`,
      async () => {
        const node = await this.api.readNode({ name });
        return node.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
  }

  /** Throws if kube-controller-manager, kube-scheduler or kwok has died. */
  assertComponentsRunning(): void {
    for (const component of this.#components) if (!component.running) throw new Error(diedMessage(component));
  }

  /** The end of each component's log, for a failing test's output. */
  logTails(lines = 15): string {
    return this.#components.map((c) => `--- ${c.name}\n${c.logTail(lines)}`).join("\n");
  }

  async stop(): Promise<void> {
    await this.cni.stop();
    for (const component of this.#components) await component.stop();
    await this.plane.stop();
  }
}

/** A Node for kwok to manage, schedulable at once but for the taints it registers with. */
async function createNode(
  api: CoreV1Api,
  name: string,
  options: { labels?: Record<string, string>; taints?: V1Taint[] } = {},
): Promise<void> {
  const taints = options.taints ?? [];
  await api.createNode({
    body: {
      metadata: {
        name,
        annotations: { [KWOK_NODE_ANNOTATION.key]: KWOK_NODE_ANNOTATION.value },
        labels: { "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", type: "kwok", ...options.labels },
      },
      ...(taints.length > 0 && { spec: { taints } }),
    },
  });
  // Admission taints a new Node not-ready; the node lifecycle controller (not run here) would lift it once
  // kwok reports Ready. Lift it now, keeping the node's own: kwok's nodes are Ready within moments.
  await api.patchNode(
    { name, body: { spec: { taints: taints.length > 0 ? taints : null } } },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  );
}

async function waitForDefaultServiceAccount(api: CoreV1Api, namespace: string): Promise<void> {
  await waitFor(
    `the "default" ServiceAccount in ${namespace} (kube-controller-manager)`,
    async () => (await api.readNamespacedServiceAccount({ namespace, name: "default" })).metadata?.name === "default",
    { timeoutMs: 60_000, intervalMs: 200 },
  );
}

const diedMessage = (component: ManagedProcess) => `${component.name} exited:\n${component.logTail()}`;
