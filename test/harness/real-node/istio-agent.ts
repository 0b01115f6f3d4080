// Istio's CNI node agent on the real node, installed as Istio installs it: Istio's own istio-cni chart (from the
// pinned module's manifests/charts/istio-cni), rendered by helm with the repair values under test and applied as is
// (DaemonSet istio-cni-node, ConfigMap istio-cni-config with the REPAIR_* keys, its ServiceAccount and RBAC). Only
// values of the chart are set: the image (built here, never pulled), and the node's CNI directories (the real node
// keeps them in its own directory instead of /opt/cni/bin and /etc/cni/net.d).
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { CoreV1Api, type V1Pod } from "@kubernetes/client-node";
import { repositoryFile } from "../binaries.js";
import { helm, setValues } from "../helm.js";
import { kubectl } from "../kubectl.js";
import { waitFor } from "../wait.js";
import type { IstioImages } from "./istio-images.js";
import type { RealNodeCluster } from "./real-node-cluster.js";

/** The chart's repair values (values.yaml `repair.*`): what Istio's agent does with a broken pod. */
export type IstioRepairValues = {
  readonly enabled: boolean;
  readonly repairPods: boolean;
  readonly deletePods: boolean;
  readonly labelPods: boolean;
};

/** Istio's defaults: repair in place. */
export const ISTIO_DEFAULT_REPAIR: IstioRepairValues = {
  enabled: true,
  repairPods: true,
  deletePods: false,
  labelPods: false,
};

/** The agent's label (k8s-app=istio-cni-node), its DaemonSet's name, and its ServiceAccount. */
const AGENT = { label: "k8s-app=istio-cni-node", daemonSet: "istio-cni-node", serviceAccount: "istio-cni" };
/** Istio's plugin's type in the chained configuration. */
export const ISTIO_PLUGIN = "istio-cni";

/**
 * Where the agent and its plugin meet on the host: the chart's fixed hostPath (the plugin's kubeconfig, log socket
 * and log), shared by every node on this machine. `agentRunDirRemover` takes it away if a test run created it.
 */
export const ISTIO_AGENT_RUN_DIR = "/var/run/istio-cni";

/** Returns a function that removes the agent's run directory again, unless it existed before. */
export function agentRunDirRemover(): () => void {
  const existed = existsSync(ISTIO_AGENT_RUN_DIR);
  return () => {
    if (!existed) rmSync(ISTIO_AGENT_RUN_DIR, { recursive: true, force: true });
  };
}

/** Istio's own namespace, which Istio's install makes (kube-system is always there). */
export async function createIstioSystem(cluster: RealNodeCluster): Promise<void> {
  await kubectl(["apply", "--server-side", "--field-manager=istio-tests", "-f", "-"], {
    plane: cluster.plane,
    input: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: istio-system\n",
  });
}

/** Where the pinned Istio module's sources are (downloaded by test/istio/build.sh). */
export function istioSources(): string {
  return execFileSync("go", ["list", "-m", "-f", "{{.Dir}}", "istio.io/istio"], {
    cwd: repositoryFile("test/istio"),
    encoding: "utf8",
    env: { ...process.env, GOFLAGS: "-mod=mod" },
  }).trim();
}

export class IstioAgent {
  readonly namespace: string;
  readonly repair: IstioRepairValues;
  readonly #cluster: RealNodeCluster;
  readonly #yaml: string;

  private constructor(cluster: RealNodeCluster, namespace: string, repair: IstioRepairValues, yaml: string) {
    this.#cluster = cluster;
    this.namespace = namespace;
    this.repair = repair;
    this.#yaml = yaml;
  }

  /** The chart rendered for this node and these repair values, applied; the agent pod is not waited for. */
  static async install(
    cluster: RealNodeCluster,
    images: IstioImages,
    namespace: string,
    repair: IstioRepairValues,
  ): Promise<IstioAgent> {
    const { layout } = cluster.node;
    const yaml = await helm([
      "template",
      "istio-cni",
      join(istioSources(), "manifests", "charts", "istio-cni"),
      "--namespace",
      namespace,
      ...setValues({
        // A reference with a "/" is used as is (the chart's daemonset.yaml); it is in the node's containerd.
        image: images.agent.ref,
        pullPolicy: "Never",
        cniBinDir: layout.cniBinDir,
        cniConfDir: layout.cniConfDir,
        // Declared by the chart even without ambient (DirectoryOrCreate): kept in the node's directory.
        cniNetnsDir: join(layout.dir, "istio-netns"),
        "repair.enabled": String(repair.enabled),
        "repair.repairPods": String(repair.repairPods),
        "repair.deletePods": String(repair.deletePods),
        "repair.labelPods": String(repair.labelPods),
      }),
    ]);
    await kubectl(["apply", "--server-side", "--field-manager=istio-tests", "-f", "-"], {
      plane: cluster.plane,
      input: yaml,
    });
    return new IstioAgent(cluster, namespace, repair, yaml);
  }

  /** The agent pod on the node, if any (not terminating). */
  async pod(): Promise<V1Pod | undefined> {
    const api = this.#cluster.plane.kubeConfig().makeApiClient(CoreV1Api);
    const pods = await api.listNamespacedPod({ namespace: this.namespace, labelSelector: AGENT.label });
    return pods.items.find((pod) => !pod.metadata?.deletionTimestamp);
  }

  /** Waits until the agent pod is Ready (its /readyz: plugin installed); returns it and when it turned Ready. */
  async waitReady(timeoutMs = 120_000): Promise<{ pod: V1Pod; readyAtMs: number }> {
    return await waitFor(
      `Istio's CNI agent in ${this.namespace} to be Ready`,
      async () => {
        this.#cluster.assertRunning();
        const pod = await this.pod();
        const ready = pod?.status?.conditions?.find((c) => c.type === "Ready" && c.status === "True");
        return pod && ready ? { pod, readyAtMs: Date.parse(ready.lastTransitionTime?.toString() ?? "") } : undefined;
      },
      { timeoutMs, intervalMs: 250 },
    );
  }

  /** Istio's own metrics (istio_cni_repair_pods_repaired_total, …) from the agent pod's monitoring port. */
  async metrics(): Promise<string> {
    const pod = await this.pod();
    if (!pod?.status?.podIP) throw new Error(`Istio's CNI agent in ${this.namespace} has no pod IP`);
    return await (await fetch(`http://${pod.status.podIP}:15014/metrics`)).text();
  }

  /** The agent containers' logs as the kubelet kept them (every pod of the agent so far, oldest first). */
  logs(): string {
    const dir = this.#cluster.node.layout.podLogsDir;
    if (!existsSync(dir)) return "";
    return readdirSync(dir)
      .filter((name) => name.startsWith(`${this.namespace}_${AGENT.daemonSet}-`))
      .flatMap((pod) => {
        const container = join(dir, pod, "install-cni");
        return existsSync(container) ? readdirSync(container).map((file) => join(container, file)) : [];
      })
      .map((file) => readFileSync(file, "utf8"))
      .join("");
  }

  /** Whether the node's chained CNI configuration has Istio's plugin in it now. */
  pluginInstalled(): boolean {
    const dir = this.#cluster.node.layout.cniConfDir;
    return readdirSync(dir)
      .filter((name) => name.endsWith(".conflist"))
      .some((name) => {
        const list = JSON.parse(readFileSync(join(dir, name), "utf8")) as { plugins?: { type?: string }[] };
        return (list.plugins ?? []).some((plugin) => plugin.type === ISTIO_PLUGIN);
      });
  }

  /**
   * Restarts the agent as a rollout or a crash would: its pod deleted gracefully (the agent removes its plugin on
   * the way out), the DaemonSet makes a new one. Returns once the old pod is gone.
   */
  async restart(): Promise<void> {
    const old = await this.pod();
    const name = old?.metadata?.name;
    if (!name) throw new Error(`no agent pod in ${this.namespace} to restart`);
    const api = this.#cluster.plane.kubeConfig().makeApiClient(CoreV1Api);
    await api.deleteNamespacedPod({ namespace: this.namespace, name });
    await waitFor(
      `the agent pod ${name} to be gone`,
      async () => {
        const pods = await api.listNamespacedPod({ namespace: this.namespace, labelSelector: AGENT.label });
        return !pods.items.some((pod) => pod.metadata?.name === name);
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
  }

  /**
   * Removes everything the chart made, and the agent pod gracefully (no garbage collector runs here), so the agent
   * takes its plugin out of the node's configuration as it does on uninstall.
   */
  async uninstall(): Promise<void> {
    await kubectl(["delete", "--ignore-not-found", "--wait=false", "-f", "-"], {
      plane: this.#cluster.plane,
      input: this.#yaml,
    });
    const api = this.#cluster.plane.kubeConfig().makeApiClient(CoreV1Api);
    await api.deleteCollectionNamespacedPod({ namespace: this.namespace, labelSelector: AGENT.label });
    await waitFor(
      `Istio's agent pods in ${this.namespace} to be gone and its plugin out of the node's configuration`,
      async () => {
        const pods = await api.listNamespacedPod({ namespace: this.namespace, labelSelector: AGENT.label });
        return pods.items.length === 0 && !this.pluginInstalled();
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
  }
}
