// Where a real test node keeps everything it creates, derived from its own temporary directory, so that the
// cleanup can find all of it again from the directory alone, even after the test process died.
import { createHash } from "node:crypto";
import { basename, join } from "node:path";

/** The prefix of every real node's directory (in the temp dir) and cgroup parent. */
export const NODE_DIR_PREFIX = "cni-repair-node-";
/** The prefix of every real node's bridge. */
export const BRIDGE_PREFIX = "crn-";

export class NodeLayout {
  readonly dir: string;
  /** The random part of the directory name: unique among live nodes. */
  readonly id: string;

  constructor(dir: string) {
    this.dir = dir;
    this.id = basename(dir).slice(NODE_DIR_PREFIX.length);
  }

  /** The Node object's name. */
  get nodeName(): string {
    return `real-${this.id.toLowerCase()}`;
  }

  get containerdSocket(): string {
    return join(this.dir, "containerd.sock");
  }

  get containerdRoot(): string {
    return join(this.dir, "containerd", "root");
  }

  get containerdState(): string {
    return join(this.dir, "containerd", "state");
  }

  /** runc's state (runc defaults to /run/containerd/runc, shared with any other containerd). */
  get runcRoot(): string {
    return join(this.dir, "runc");
  }

  get cniBinDir(): string {
    return join(this.dir, "cni", "bin");
  }

  get cniConfDir(): string {
    return join(this.dir, "cni", "net.d");
  }

  /** While this file exists the node's mesh CNI agent is "ready": the plugin installs the redirect rule. */
  get agentReadyFile(): string {
    return join(this.dir, "mesh", "agent-ready");
  }

  /** The directory holding the switch; the agent pod mounts it (hostPath) for its readiness probe. */
  get agentSwitchDir(): string {
    return join(this.dir, "mesh");
  }

  /** One JSON line per sandbox the mesh plugin set up (MeshCniRecord). */
  get meshLog(): string {
    return join(this.dir, "mesh-cni.log");
  }

  get kubeletRoot(): string {
    return join(this.dir, "kubelet");
  }

  get podLogsDir(): string {
    return join(this.dir, "pod-logs");
  }

  /** The cgroup under which the kubelet puts every pod (in each cgroup v1 hierarchy). */
  get cgroupRoot(): string {
    return `/${NODE_DIR_PREFIX}${this.id}`;
  }

  /** The pods' bridge (at most 15 characters, the kernel's limit for interface names). */
  get bridge(): string {
    return `${BRIDGE_PREFIX}${this.id}`;
  }

  /** The pods' subnet: one /24 out of 10.213.0.0/16, chosen by the id so that two nodes rarely share one. */
  get podSubnet(): string {
    const third = createHash("sha256").update(this.id).digest()[0] ?? 0;
    return `10.213.${third}.0/24`;
  }
}
