// A cluster with one real node: the test control plane (ServiceAccount admission on), kube-controller-manager
// (workloads, and the node lifecycle that lifts the not-ready taint once the kubelet reports Ready, and
// DaemonSets, and the kube-root-ca.crt ConfigMap a pod's projected ServiceAccount token comes with), kube-scheduler,
// a RealNode (kubelet + containerd) registered with it, and the "kubernetes" Service served from that node, so that
// an in-cluster client in a pod reaches the API server.
import { randomBytes } from "node:crypto";
import { AppsV1Api, CoreV1Api } from "@kubernetes/client-node";
import { releaseBinaries } from "../binaries.js";
import { ControlPlane } from "../control-plane.js";
import { startControllerManager, startScheduler } from "../kube-components.js";
import type { ManagedProcess } from "../managed-process.js";
import { waitFor } from "../wait.js";
import { KubernetesService, serviceRange } from "./kubernetes-service.js";
import { RealNode, type RealNodeOptions } from "./real-node.js";

const EXTRA_CONTROLLERS = [
  "node-lifecycle-controller",
  "daemonset-controller",
  "root-ca-certificate-publisher-controller",
];

export class RealNodeCluster {
  readonly plane: ControlPlane;
  /** The node the cluster started with. */
  readonly node: RealNode;
  readonly #nodes: RealNode[];
  readonly api: CoreV1Api;
  readonly apps: AppsV1Api;
  readonly #components: ManagedProcess[];
  readonly #service: KubernetesService;

  private constructor(plane: ControlPlane, node: RealNode, components: ManagedProcess[], service: KubernetesService) {
    this.plane = plane;
    this.node = node;
    this.#nodes = [node];
    this.api = plane.kubeConfig().makeApiClient(CoreV1Api);
    this.apps = plane.kubeConfig().makeApiClient(AppsV1Api);
    this.#components = components;
    this.#service = service;
  }

  static async start(options: RealNodeOptions = {}): Promise<RealNodeCluster> {
    const binaries = releaseBinaries(["kube-controller-manager", "kube-scheduler"]);
    const plane = await ControlPlane.start({
      serviceAccountAdmission: true,
      apiServerArgs: [`--service-cluster-ip-range=${serviceRange()}`],
    });
    const components: ManagedProcess[] = [];
    let node: RealNode | undefined;
    try {
      components.push(
        startControllerManager(
          plane,
          { kubeControllerManager: binaries["kube-controller-manager"] },
          EXTRA_CONTROLLERS,
        ),
        startScheduler(plane, { kubeScheduler: binaries["kube-scheduler"] }),
      );
      node = await RealNode.start(plane, options);
      return new RealNodeCluster(plane, node, components, await KubernetesService.start(plane, node.layout));
    } catch (error) {
      await node?.stop();
      for (const component of components) await component.stop();
      await plane.stop();
      throw error;
    }
  }

  /** Starts one more real node, e.g. one that registers with a startup taint (stopped with the cluster). */
  async addNode(options: RealNodeOptions = {}): Promise<RealNode> {
    const node = await RealNode.start(this.plane, options);
    this.#nodes.push(node);
    return node;
  }

  /** A fresh namespace, ready for pods (its "default" ServiceAccount exists). */
  async createNamespace(prefix: string): Promise<string> {
    const name = `${prefix}-${randomBytes(4).toString("hex")}`;
    await this.api.createNamespace({ body: { metadata: { name } } });
    await waitFor(
      `the "default" ServiceAccount in ${name}`,
      async () => (await this.api.readNamespacedServiceAccount({ namespace: name, name: "default" })) !== undefined,
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    return name;
  }

  /** Throws if a component, the kubelet or containerd has died. */
  assertRunning(): void {
    for (const component of this.#components) {
      if (!component.running) throw new Error(`${component.name} exited:\n${component.logTail()}`);
    }
    for (const node of this.#nodes) node.assertRunning();
  }

  logTails(lines = 20): string {
    const components = this.#components.map((c) => `--- ${c.name}\n${c.logTail(lines)}`).join("\n");
    return [components, ...this.#nodes.map((node) => node.logTails(lines))].join("\n");
  }

  async stop(): Promise<void> {
    await this.#service.stop();
    for (const node of this.#nodes) await node.stop();
    for (const component of this.#components) await component.stop();
    await this.plane.stop();
  }
}
