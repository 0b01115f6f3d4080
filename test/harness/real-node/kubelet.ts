// The real node's kubelet: the settings this machine needs (cgroup v1 with the cgroupfs driver, no systemd, swap
// allowed) and everything it writes kept in the node's directory and its own cgroup parent.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ControlPlane } from "../control-plane.js";
import { ManagedProcess } from "../managed-process.js";
import type { NodeLayout } from "./node-layout.js";
import { inNamespacesOf } from "./node-namespaces.js";

export type KubeletOptions = {
  /** Taints the kubelet registers the Node with (--register-with-taints), e.g. a CNI startup taint. */
  readonly registerWithTaints?: readonly { key: string; value?: string; effect: string }[];
};

function kubeletConfiguration(layout: NodeLayout, options: KubeletOptions, port: number): object {
  return {
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    // cgroup v1 is in maintenance since 1.31 and refused unless allowed; no systemd, so the cgroupfs driver.
    failCgroupV1: false,
    cgroupDriver: "cgroupfs",
    // Pods go under a cgroup of this node's own, so the cleanup knows what to remove.
    cgroupRoot: layout.cgroupRoot,
    cgroupsPerQOS: true,
    enforceNodeAllocatable: ["pods"],
    failSwapOn: false,
    // Lowering a score needs CAP_SYS_RESOURCE, which this machine does not give (the kubelet's default is -999).
    oomScoreAdj: 0,
    containerRuntimeEndpoint: `unix://${layout.containerdSocket}`,
    podLogsDir: layout.podLogsDir,
    // Its own API (logs, exec) on loopback only and unused by the tests: no anonymous access, nothing else to check.
    address: "127.0.0.1",
    port,
    readOnlyPort: 0,
    healthzPort: 0,
    authentication: { anonymous: { enabled: false }, webhook: { enabled: false } },
    authorization: { mode: "AlwaysAllow" },
    // No DNS for pods: the tests' pods talk to nothing but themselves.
    resolvConf: "",
    // The images cannot be pulled again (no registry): never collect them, never evict for disk.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: { "memory.available": "1Mi", "nodefs.available": "1%", "imagefs.available": "1%" },
    // Status changes reach the API server quickly: the tests wait on them.
    nodeStatusUpdateFrequency: "2s",
    syncFrequency: "5s",
    serializeImagePulls: false,
    registerWithTaints: options.registerWithTaints ?? [],
  };
}

export function startKubelet(
  plane: ControlPlane,
  layout: NodeLayout,
  kubelet: string,
  options: KubeletOptions,
  port: number,
  /** containerd's PID when it has a PID and mount namespace of its own: the kubelet joins it (it mounts volumes). */
  namespacePid?: number,
): ManagedProcess {
  mkdirSync(layout.kubeletRoot, { recursive: true });
  mkdirSync(layout.podLogsDir, { recursive: true });
  const configFile = join(layout.dir, "kubelet.json");
  writeFileSync(configFile, JSON.stringify(kubeletConfiguration(layout, options, port), null, 2));
  // The admin's credentials (system:masters): the API server runs RBAC only, without the Node authorizer.
  const kubeconfig = join(layout.dir, "kubelet.kubeconfig");
  writeFileSync(kubeconfig, plane.kubeconfigYaml(), { mode: 0o600 });
  const args = [
    `--config=${configFile}`,
    `--kubeconfig=${kubeconfig}`,
    `--root-dir=${layout.kubeletRoot}`,
    `--cert-dir=${join(layout.kubeletRoot, "pki")}`,
    `--hostname-override=${layout.nodeName}`,
    "--v=2",
  ];
  const [binary, argv] = namespacePid === undefined ? [kubelet, args] : inNamespacesOf(namespacePid, kubelet, args);
  return new ManagedProcess("kubelet", binary, argv, join(layout.dir, "kubelet.log"));
}
