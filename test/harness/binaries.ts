// Locates the etcd, kube-apiserver and kubectl binaries, building them on first use (cached by version).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export type ControlPlaneBinaries = {
  readonly etcd: string;
  readonly kubeApiserver: string;
  /** kubectl of the same release, with its built-in kustomize: renders and applies the manifests. */
  readonly kubectl: string;
};

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

let cached: ControlPlaneBinaries | undefined;

/**
 * CNI_REPAIR_CONTROLPLANE_BIN points at a directory with all three binaries (skips the build);
 * otherwise build.sh prints the cache directory, building only when the cache is empty.
 */
export function controlPlaneBinaries(): ControlPlaneBinaries {
  if (cached) return cached;
  const dir =
    process.env.CNI_REPAIR_CONTROLPLANE_BIN ??
    execFileSync(repositoryFile("test/controlplane/build.sh"), {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }).trim();
  const binaries = {
    etcd: join(dir, "etcd"),
    kubeApiserver: join(dir, "kube-apiserver"),
    kubectl: join(dir, "kubectl"),
  };
  for (const path of Object.values(binaries)) {
    if (!existsSync(path)) throw new Error(`control-plane binary missing: ${path}`);
  }
  cached = binaries;
  return binaries;
}
