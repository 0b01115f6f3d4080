// Istio's own repair controller (bench/istio-repair: istio.io/istio/cni/pkg/repair built from the Go module proxy),
// found in the tools cache and started node-scoped like the Istio CNI DaemonSet runs it.
import { execFileSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { fileURLToPath } from "node:url";
import { WatchedProcess } from "./watched-process.js";

const BUILD_SCRIPT = fileURLToPath(new URL("../../../bench/istio-repair/build.sh", import.meta.url));

/** Istio's controller for this run: its binary, or why there is none and whether the run asked for that. */
export type IstioRepairLookup =
  | { readonly binary: string }
  | { readonly binary: undefined; readonly why: string; readonly asked: boolean };

/** How a run gets the binary: the message of a run that has none and did not ask for that. */
const BUILD_HINT =
  "`make istio-repair` builds it once (10-20 min the first time, then cached; make bench, bench-smoke and test " +
  "build it), or BENCH_ISTIO_REPAIR=off runs without it";

/**
 * The binary: BENCH_ISTIO_REPAIR (a path, or "off"), else the cached build if there is one (never builds: the make
 * targets build it first).
 */
export function findIstioRepair(env: NodeJS.ProcessEnv = process.env): IstioRepairLookup {
  const given = env.BENCH_ISTIO_REPAIR;
  if (given === "off") return { binary: undefined, why: "BENCH_ISTIO_REPAIR=off", asked: true };
  if (given) {
    try {
      accessSync(given, constants.X_OK);
    } catch {
      return { binary: undefined, why: `BENCH_ISTIO_REPAIR=${given} is not an executable file`, asked: false };
    }
    return { binary: given };
  }
  try {
    const dir = execFileSync(BUILD_SCRIPT, ["--cached-only"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    return { binary: `${dir.trim()}/istio-repair` };
  } catch {
    return { binary: undefined, why: `not built: ${BUILD_HINT}`, asked: false };
  }
}

/** The line the bench's main.go prints once its pod informer has synced. */
export const ISTIO_SYNCED_LINE = "synced";

/** Spawns it for `node` with the bench's kubeconfig, without waiting (many at once: the fleet rollout). */
export function spawnIstioRepair(binary: string, kubeconfig: string, node: string): WatchedProcess {
  return new WatchedProcess({
    command: binary,
    args: [`--kubeconfig=${kubeconfig}`, `--node-name=${node}`],
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
  });
}

/** Spawns it for `node` with the bench's kubeconfig; resolves once its pod informer has synced. */
export async function startIstioRepair(
  binary: string,
  kubeconfig: string,
  node: string,
  readyTimeoutMs: number,
): Promise<{ process: WatchedProcess; readyMs: number }> {
  const child = spawnIstioRepair(binary, kubeconfig, node);
  try {
    await child.waitForLine((line) => line === ISTIO_SYNCED_LINE, readyTimeoutMs);
  } catch (error) {
    await child.stop();
    throw error;
  }
  return { process: child, readyMs: performance.now() - child.startedAt };
}
