// Starts a controller scoped to one test namespace, so tests never act on each other's pods.
import { ControllerProcess } from "../../harness/controller-process.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

export async function startControllerFor(namespace: string, args: readonly string[] = []): Promise<ControllerProcess> {
  return await ControllerProcess.start({
    args: [
      `--kubeconfig=${controlPlane().kubeconfigPath}`,
      `--field-selector=metadata.namespace=${namespace}`,
      ...args,
    ],
  });
}
