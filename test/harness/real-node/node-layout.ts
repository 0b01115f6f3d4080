// Where a real test node keeps everything it creates, derived from its own temporary directory, so that the
// cleanup can find all of it again from the directory alone, even after the test process died.
import { createHash } from "node:crypto";
import { basename, join } from "node:path";

/** The prefix of every real node's directory (in the temp dir) and cgroup parent. */
export const NODE_DIR_PREFIX = "cni-repair-node-";
/** The prefix of every real node's bridge. */
export const BRIDGE_PREFIX = "crn-";
/** The prefix of the link holding a cluster's Service address, on the node that serves it (kubernetes-service.ts). */
export const SERVICE_LINK_PREFIX = "crs-";

export class NodeLayout {
  readonly dir: string;
  /** The random part of the directory name: unique among live nodes. */
  readonly id: string;
  /** The Node object's name. */
  readonly nodeName: string;
  readonly containerdSocket: string;
  readonly containerdRoot: string;
  readonly containerdState: string;
  /** runc's state (runc defaults to /run/containerd/runc, shared with any other containerd). */
  readonly runcRoot: string;
  readonly cniBinDir: string;
  readonly cniConfDir: string;
  /** The directory holding the switch; the agent pod mounts it (hostPath) for its readiness probe. */
  readonly agentSwitchDir: string;
  /** While this file exists the node's mesh CNI agent is "ready": the plugin installs the redirect rule. */
  readonly agentReadyFile: string;
  /** One JSON line per sandbox the mesh plugin set up (MeshCniRecord). */
  readonly meshLog: string;
  readonly kubeletRoot: string;
  readonly podLogsDir: string;
  /** The cgroup under which the kubelet puts every pod (in each cgroup v1 hierarchy). */
  readonly cgroupRoot: string;
  /** The pods' bridge (at most 15 characters, the kernel's limit for interface names). */
  readonly bridge: string;
  /** The link (an empty bridge) that holds the cluster's "kubernetes" Service address when this node serves it. */
  readonly serviceLink: string;
  /** The pods' subnet: one /24 out of 10.213.0.0/16, chosen by the id so that two nodes rarely share one. */
  readonly podSubnet: string;

  constructor(dir: string) {
    const inside = (...parts: string[]) => join(dir, ...parts);
    this.dir = dir;
    this.id = basename(dir).slice(NODE_DIR_PREFIX.length);
    this.nodeName = `real-${this.id.toLowerCase()}`;
    this.containerdSocket = inside("containerd.sock");
    this.containerdRoot = inside("containerd", "root");
    this.containerdState = inside("containerd", "state");
    this.runcRoot = inside("runc");
    this.cniBinDir = inside("cni", "bin");
    this.cniConfDir = inside("cni", "net.d");
    this.agentSwitchDir = inside("mesh");
    this.agentReadyFile = inside("mesh", "agent-ready");
    this.meshLog = inside("mesh-cni.log");
    this.kubeletRoot = inside("kubelet");
    this.podLogsDir = inside("pod-logs");
    this.cgroupRoot = `/${NODE_DIR_PREFIX}${this.id}`;
    this.bridge = `${BRIDGE_PREFIX}${this.id}`;
    this.serviceLink = `${SERVICE_LINK_PREFIX}${this.id}`;
    this.podSubnet = `10.213.${createHash("sha256").update(this.id).digest()[0] ?? 0}.0/24`;
  }
}
