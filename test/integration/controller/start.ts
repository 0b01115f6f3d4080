// Starts a controller scoped to one test namespace, so tests never act on each other's pods.
import { ControllerProcess } from "../../harness/controller-process.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

/**
 * Guards that need more than one namespace's worth of setup are off unless a test turns them on: no Lease
 * election (tests run one controller at a time) and no CNI agent gate (tests that want it create agent pods).
 */
export const PLAIN = ["--leader-elect=false", "--cni-agent-gate=off"] as const;

export async function startControllerFor(namespace: string, args: readonly string[] = []): Promise<ControllerProcess> {
  return await ControllerProcess.start({
    args: [
      `--kubeconfig=${controlPlane().kubeconfigPath}`,
      `--field-selector=metadata.namespace=${namespace}`,
      ...PLAIN,
      ...args,
    ],
  });
}
