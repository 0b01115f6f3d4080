// Runs the kubectl built alongside the control plane (kustomize included), as a user would from a shell.
import { spawn } from "node:child_process";
import { controlPlaneBinaries } from "./binaries.js";
import type { ControlPlane } from "./control-plane.js";

export type KubectlOptions = {
  /** Text for stdin (e.g. manifests for `apply -f -`). */
  readonly input?: string;
  /** Talk to this control plane as its admin; omit for commands that need no server (kustomize). */
  readonly plane?: ControlPlane;
};

/** kubectl's stdout; rejects with its stderr when it exits non-zero. */
export function kubectl(args: readonly string[], options: KubectlOptions = {}): Promise<string> {
  const fullArgs = options.plane ? [`--kubeconfig=${options.plane.kubeconfigPath}`, ...args] : [...args];
  const child = spawn(controlPlaneBinaries().kubectl, fullArgs, {
    stdio: ["pipe", "pipe", "pipe"],
    // No KUBECONFIG or ~/.kube/config of the machine may leak in: the server is always given explicitly.
    env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdin.end(options.input ?? "");
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`kubectl ${args.join(" ")} exited ${code}:\n${stderr}`));
    });
  });
}
