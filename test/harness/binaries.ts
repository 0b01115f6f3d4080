// Locates the binaries of the test control plane (etcd, kube-apiserver, kubectl, …), building each on first use.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export type ControlPlaneBinaries = {
  readonly etcd: string;
  readonly kubeApiserver: string;
};

/** What test/controlplane/build.sh can build, all of one Kubernetes release (and its etcd). */
export type ReleaseBinary =
  | "etcd"
  | "kube-apiserver"
  | "kubectl"
  | "kube-controller-manager"
  | "kube-scheduler"
  | "kubelet";

/** A file of the repository (e.g. test/controlplane/build.sh), found from dist/test/harness or the source. */
export function repositoryFile(relativePath: string): string {
  let dir = fileURLToPath(new URL(".", import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, relativePath);
    if (existsSync(candidate)) return candidate;
    dir = join(dir, "..");
  }
  throw new Error(`cannot find ${relativePath} above the test harness`);
}

const found = new Map<ReleaseBinary, string>();

/**
 * Paths of the named binaries. CNI_REPAIR_CONTROLPLANE_BIN points at a directory holding them (skips the build);
 * otherwise build.sh builds only the named ones that are not cached yet and prints the cache directory.
 */
export function releaseBinaries<N extends ReleaseBinary>(names: readonly N[]): Record<N, string> {
  const missing = names.filter((name) => !found.has(name));
  if (missing.length > 0) {
    const dir =
      process.env.CNI_REPAIR_CONTROLPLANE_BIN ??
      execFileSync(repositoryFile("test/controlplane/build.sh"), missing, {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "inherit"],
      }).trim();
    for (const name of missing) {
      const path = join(dir, name);
      if (!existsSync(path)) throw new Error(`control-plane binary missing: ${path}`);
      found.set(name, path);
    }
  }
  return Object.fromEntries(names.map((name) => [name, found.get(name)])) as Record<N, string>;
}

/** etcd and kube-apiserver: all the demo and most tests start, so a first `make demo` builds only these. */
export function controlPlaneBinaries(): ControlPlaneBinaries {
  const binaries = releaseBinaries(["etcd", "kube-apiserver"]);
  return { etcd: binaries.etcd, kubeApiserver: binaries["kube-apiserver"] };
}

/** kubectl of the same release, with its built-in kustomize: renders and applies the manifests. */
export function kubectlBinary(): string {
  return releaseBinaries(["kubectl"]).kubectl;
}
