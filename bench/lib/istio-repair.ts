// Istio's own repair controller (bench/istio-repair: istio.io/istio/cni/pkg/repair built from the Go module proxy),
// found in the tools cache and started node-scoped like the Istio CNI DaemonSet runs it.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { WatchedProcess } from "./watched-process.js";

const BUILD_SCRIPT = fileURLToPath(new URL("../../../bench/istio-repair/build.sh", import.meta.url));

/**
 * The binary: BENCH_ISTIO_REPAIR (a path, or "off"), else the cached build if there is one (never builds:
 * `make bench` builds it first; the smoke run uses it only when cached). Undefined: not measured.
 */
export function findIstioRepair(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const given = env.BENCH_ISTIO_REPAIR;
  if (given === "off") return undefined;
  if (given) return given;
  try {
    const dir = execFileSync(BUILD_SCRIPT, ["--cached-only"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    return `${dir.trim()}/istio-repair`;
  } catch {
    return undefined;
  }
}

/** Spawns it for `node` with the bench's kubeconfig; resolves once its pod informer has synced. */
export async function startIstioRepair(
  binary: string,
  kubeconfig: string,
  node: string,
  readyTimeoutMs: number,
): Promise<{ process: WatchedProcess; readyMs: number }> {
  const child = new WatchedProcess({
    command: binary,
    args: [`--kubeconfig=${kubeconfig}`, `--node-name=${node}`],
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
  });
  try {
    await child.waitForLine((line) => line === "synced", readyTimeoutMs);
  } catch (error) {
    await child.stop();
    throw error;
  }
  return { process: child, readyMs: performance.now() - child.startedAt };
}
