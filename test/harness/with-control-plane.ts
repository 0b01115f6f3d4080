// Runs a command against a fresh control plane (KUBECONFIG set), then tears it down: for scripts and demos.
// Usage: node dist/test/harness/with-control-plane.js [-- command args...]
// Without a command it prints the kubeconfig path and serves until interrupted.
import { spawn } from "node:child_process";
import { ControlPlane } from "./control-plane.js";

const separator = process.argv.indexOf("--");
const command = separator >= 0 ? process.argv.slice(separator + 1) : [];

const plane = await ControlPlane.start();
let stopping = false;
const stop = async (exitCode: number): Promise<never> => {
  if (!stopping) {
    stopping = true;
    await plane.stop();
  }
  process.exit(exitCode);
};
process.once("SIGINT", () => void stop(130));
process.once("SIGTERM", () => void stop(143));

console.log(JSON.stringify({ kubeconfig: plane.kubeconfigPath, server: plane.server, pids: plane.pids }));
if (command.length > 0) {
  const [binary = "", ...args] = command;
  const child = spawn(binary, args, { stdio: "inherit", env: { ...process.env, KUBECONFIG: plane.kubeconfigPath } });
  child.once("exit", (code, signal) => void stop(code ?? (signal ? 1 : 0)));
  child.once("error", (error) => {
    console.error(`cannot run ${binary}: ${error.message}`);
    void stop(127);
  });
}
