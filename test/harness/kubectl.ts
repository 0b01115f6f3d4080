// Runs the kubectl built alongside the control plane (kustomize included), as a user would from a shell.
import { kubectlBinary } from "./binaries.js";
import type { ControlPlane } from "./control-plane.js";
import { runToEnd } from "./run-to-end.js";

export type KubectlOptions = {
  /** Text for stdin (e.g. manifests for `apply -f -`). */
  readonly input?: string;
  /** Talk to this control plane as its admin; omit for commands that need no server (kustomize). */
  readonly plane?: ControlPlane;
};

/** kubectl's stdout; rejects with its stderr when it exits non-zero. */
export async function kubectl(args: readonly string[], options: KubectlOptions = {}): Promise<string> {
  const fullArgs = options.plane ? [`--kubeconfig=${options.plane.kubeconfigPath}`, ...args] : [...args];
  // HOME points nowhere: the server is always given explicitly.
  const result = await runToEnd(kubectlBinary(), fullArgs, {
    env: { HOME: "/nonexistent" },
    ...(options.input !== undefined && { input: options.input }),
  });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(" ")} exited ${result.code}:\n${result.stderr}`);
  return result.stdout;
}
