// A real Kubernetes node for the tests: containerd with runc and a kubelet of the control plane's release,
// registered with the test API server, its pods on a bridge with the tests' mesh CNI plugin chained after it.
// Root only (it creates cgroups, mounts and network interfaces). Everything it creates is removed by stop(),
// by the test process's exit handler, and, after a crash, by the next start (node-cleanup.ts).
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import { releaseBinaries } from "../binaries.js";
import type { ControlPlane } from "../control-plane.js";
import type { ManagedProcess } from "../managed-process.js";
import { destroyOnExit, ownedTempDir } from "../owned-dirs.js";
import { freePort } from "../ports.js";
import { waitFor } from "../wait.js";
import { Containerd, SNAPSHOTTERS, type Snapshotter } from "./containerd.js";
import { type KubeletOptions, startKubelet } from "./kubelet.js";
import { setMeshAgentReady, writeMeshCni } from "./mesh-cni.js";
import { installRedirect, type MeshCniRecord } from "./mesh-cni-plugin.js";
import { cleanUpAbandonedNodes, cleanUpNode, saveSysctls } from "./node-cleanup.js";
import { type NodeImages, nodeImages } from "./node-images.js";
import { NODE_DIR_PREFIX, NodeLayout } from "./node-layout.js";

export type RealNodeOptions = KubeletOptions & {
  /** overlayfs unless CNI_REPAIR_SNAPSHOTTER says otherwise (native works on any file system, copying). */
  readonly snapshotter?: Snapshotter;
  /** false: no test mesh plugin in the node's network, for a real mesh's agent to chain its own (default true). */
  readonly meshPlugin?: boolean;
  /**
   * true: containerd and the kubelet in a PID and mount namespace of the node's own, with its own /proc
   * (node-namespaces.ts), so that a pod's hostPath /proc shows the node's processes under a PID 1 it may enter
   * (Istio's in-place repair needs that). Paths the node mounts (volumes, network namespaces) are then seen only
   * inside it: projectedToken and repairInPlace do not work on such a node.
   */
  readonly ownPidNamespace?: boolean;
};

/** Commands the node runs, each from its Debian package; named in the error when one is missing. */
const REQUIRED_COMMANDS = {
  containerd: "containerd",
  "containerd-shim-runc-v2": "containerd",
  ctr: "containerd",
  runc: "runc",
  iptables: "iptables",
  nsenter: "util-linux",
  unshare: "util-linux",
  setpriv: "util-linux",
};

export class RealNode {
  readonly layout: NodeLayout;
  readonly images: NodeImages;
  readonly #processes: ManagedProcess[];
  readonly #kubelet: ManagedProcess;
  readonly containerd: Containerd;
  readonly #exitGuard = destroyOnExit(this);

  private constructor(layout: NodeLayout, images: NodeImages, containerd: Containerd, kubelet: ManagedProcess) {
    this.layout = layout;
    this.images = images;
    this.containerd = containerd;
    this.#kubelet = kubelet;
    this.#processes = [kubelet, containerd.process];
  }

  get name(): string {
    return this.layout.nodeName;
  }

  /** Starts containerd and the kubelet and waits until the Node is Ready. */
  static async start(plane: ControlPlane, options: RealNodeOptions = {}): Promise<RealNode> {
    checkPrerequisites();
    const { kubelet } = releaseBinaries(["kubelet"]);
    const images = nodeImages();
    cleanUpAbandonedNodes();
    const layout = new NodeLayout(ownedTempDir(NODE_DIR_PREFIX));
    let containerd: Containerd | undefined;
    let kubeletProcess: ManagedProcess | undefined;
    try {
      saveSysctls();
      createCgroupRoot(layout.cgroupRoot);
      writeMeshCni(layout, options.meshPlugin);
      const snapshotter = options.snapshotter ?? snapshotterFromEnv();
      containerd = await Containerd.start(layout, images, snapshotter, options.ownPidNamespace);
      kubeletProcess = startKubelet(plane, layout, kubelet, options, await freePort(), containerd.namespacePid);
      const node = new RealNode(layout, images, containerd, kubeletProcess);
      await node.#waitUntilReady(plane);
      return node;
    } catch (error) {
      kubeletProcess?.killNow();
      containerd?.process.killNow();
      cleanUpNode(layout);
      throw error;
    }
  }

  async #waitUntilReady(plane: ControlPlane): Promise<void> {
    const api = plane.kubeConfig().makeApiClient(CoreV1Api);
    await waitFor(
      `node ${this.name} to register and turn Ready`,
      async () => {
        this.assertRunning();
        try {
          const node = await api.readNode({ name: this.name });
          return node.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
        } catch {
          return false;
        }
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
  }

  /** Throws with the log's end if the kubelet or containerd has died. */
  assertRunning(): void {
    for (const process of this.#processes) {
      if (!process.running) throw new Error(`${process.name} exited:\n${process.logTail()}`);
    }
  }

  /** Turns the node's mesh CNI agent on or off (the plugin and the agent pod's readiness probe follow it). */
  setMeshAgentReady(ready: boolean): void {
    setMeshAgentReady(this.layout, ready);
  }

  /**
   * The agent's in-place repair (as Istio's CNI agent does it): the redirect rule into the network namespace of
   * each named pod's sandboxes that were set up without it. The pod recovers when the kubelet next retries its
   * validator. Returns how many namespaces got the rule.
   */
  repairInPlace(pods: readonly string[]): number {
    const missing = this.meshRecords().filter((r) => !r.redirected && pods.includes(r.pod) && existsSync(r.netns));
    for (const record of missing) installRedirect(record.netns);
    return missing.length;
  }

  /**
   * The ServiceAccount token the kubelet projected into a pod's kube-api-access volume: what the pod's process
   * authenticates with (bound to the pod, so it names this node).
   */
  projectedToken(podUid: string): string {
    const volumes = join(this.layout.kubeletRoot, "pods", podUid, "volumes", "kubernetes.io~projected");
    const volume = readdirSync(volumes).find((name) => name.startsWith("kube-api-access-"));
    if (!volume) throw new Error(`pod ${podUid} has no kube-api-access volume in ${volumes}`);
    return readFileSync(join(volumes, volume, "token"), "utf8");
  }

  /** What the mesh plugin did for each sandbox, in order. */
  meshRecords(): MeshCniRecord[] {
    if (!existsSync(this.layout.meshLog)) return [];
    return readFileSync(this.layout.meshLog, "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as MeshCniRecord);
  }

  /** The end of the kubelet's and containerd's logs, for a failing test's output. */
  logTails(lines = 20): string {
    return this.#processes.map((p) => `--- ${p.name}\n${p.logTail(lines)}`).join("\n");
  }

  /** Stops the kubelet and containerd and removes everything the node created. Safe to call twice. */
  async stop(): Promise<void> {
    await this.#kubelet.stop("SIGTERM", 5_000);
    await this.containerd.stop(5_000);
    this.destroyNow();
  }

  /** For process exit handlers: kill everything, remove everything, synchronously. */
  destroyNow(): void {
    for (const process of this.#processes) process.killNow();
    cleanUpNode(this.layout);
    this.#exitGuard.released();
  }
}

function snapshotterFromEnv(): Snapshotter {
  const wanted = process.env.CNI_REPAIR_SNAPSHOTTER ?? "overlayfs";
  const known = SNAPSHOTTERS.find((name) => name === wanted);
  if (!known) throw new Error(`CNI_REPAIR_SNAPSHOTTER=${wanted}: expected one of ${SNAPSHOTTERS.join(", ")}`);
  return known;
}

function checkPrerequisites(): void {
  if (process.getuid?.() !== 0) throw new Error("a real node needs root (cgroups, mounts, network interfaces)");
  const path = (process.env.PATH ?? "").split(":");
  for (const [command, pkg] of Object.entries(REQUIRED_COMMANDS)) {
    if (!path.some((dir) => dir && existsSync(join(dir, command)))) {
      throw new Error(`${command} is not installed: run 'make node' (Debian: apt-get install ${pkg})`);
    }
  }
}

/**
 * The node's cgroup parent in every cgroup v1 hierarchy. A new cpuset cgroup starts with no CPUs and no memory
 * nodes (clone_children is off), so it gets its parent's.
 */
function createCgroupRoot(root: string): void {
  for (const hierarchy of ["blkio", "cpu", "cpuacct", "cpuset", "devices", "freezer", "memory", "pids", "systemd"]) {
    const base = join("/sys/fs/cgroup", hierarchy);
    if (!existsSync(base)) continue;
    mkdirSync(join(base, root), { recursive: true });
    if (hierarchy === "cpuset") {
      for (const file of ["cpuset.cpus", "cpuset.mems"]) {
        appendFileSync(join(base, root, file), readFileSync(join(base, file), "utf8"));
      }
    }
  }
}
