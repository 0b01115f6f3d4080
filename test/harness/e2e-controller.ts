// Starting cni-repair against the e2e cluster: scoped to one test namespace, its CNI agents in another, and the
// guards that are not under test kept out of the way.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ControlPlane } from "./control-plane.js";
import { ControllerProcess } from "./controller-process.js";

export type RepairScope = {
  /** Where the workload under repair runs; the controller watches only this namespace. */
  readonly namespace: string;
  /** Where the CNI agent pods are. */
  readonly agentNamespace: string;
};

/**
 * The flags of a single-replica controller for the scope: the readiness gate on (agents Ready for 2 s), the
 * deletion pace and the storm breaker off (a whole node broken is the scenario, not a storm). `extra` wins.
 */
export function repairArgs(kubeconfigPath: string, scope: RepairScope, extra: readonly string[] = []): string[] {
  return [
    `--kubeconfig=${kubeconfigPath}`,
    `--field-selector=metadata.namespace=${scope.namespace}`,
    "--leader-elect=false",
    `--cni-agent-namespace=${scope.agentNamespace}`,
    "--cni-agent-min-ready=2s",
    "--max-deletions-per-minute=0",
    "--max-outage-deletions-per-minute=0",
    "--max-broken-fraction=1",
    // The test's CNI agents are not Istio's: nothing repairs in place, and with agents running and no settings the
    // istio rule would hold as if Istio did (mode unknown). The tests beside Istio's repair turn it back on.
    "--istio-repair=ignore",
    ...extra,
  ];
}

export async function startRepair(
  kubeconfigPath: string,
  scope: RepairScope,
  extra: readonly string[] = [],
): Promise<ControllerProcess> {
  return await ControllerProcess.start({ args: repairArgs(kubeconfigPath, scope, extra) });
}

/** A copy of the admin kubeconfig whose server is a proxy on this loopback port (it must present the API
 * server's certificate, or pass TLS through untouched). */
export function kubeconfigVia(plane: ControlPlane, port: number, label: string): string {
  const config = JSON.parse(plane.kubeconfigYaml()) as { clusters: { cluster: { server: string } }[] };
  for (const entry of config.clusters) entry.cluster.server = `https://127.0.0.1:${port}`;
  const path = join(plane.dir, `via-${label}-${port}.kubeconfig`);
  writeFileSync(path, JSON.stringify(config), { mode: 0o600 });
  return path;
}
