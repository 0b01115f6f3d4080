// Locates the binaries of the whole-cluster e2e mode: kube-controller-manager and kube-scheduler (built with the
// control plane, same release) and kwok (its own Go module and cache), building them on first use.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { releaseBinaries, repositoryFile } from "./binaries.js";

export type ClusterBinaries = {
  readonly kubeControllerManager: string;
  readonly kubeScheduler: string;
  /** Fake nodes: runs the pods bound to them like a kubelet would, by the stages it is given. */
  readonly kwok: string;
};

let cached: ClusterBinaries | undefined;

/**
 * The controller-manager and scheduler come from the control plane's build (CNI_REPAIR_CONTROLPLANE_BIN or build.sh);
 * CNI_REPAIR_KWOK_BIN points at a directory holding kwok, otherwise kwok/build.sh builds or finds it.
 */
export function clusterBinaries(): ClusterBinaries {
  if (cached) return cached;
  const release = releaseBinaries(["kube-controller-manager", "kube-scheduler"]);
  const kwokDir =
    process.env.CNI_REPAIR_KWOK_BIN ??
    execFileSync(repositoryFile("test/controlplane/kwok/build.sh"), {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }).trim();
  const binaries = {
    kubeControllerManager: release["kube-controller-manager"],
    kubeScheduler: release["kube-scheduler"],
    kwok: join(kwokDir, "kwok"),
  };
  for (const path of Object.values(binaries)) {
    if (!existsSync(path)) throw new Error(`e2e cluster binary missing: ${path} (is the control-plane cache stale?)`);
  }
  cached = binaries;
  return binaries;
}
