// Runs a command to completion with a clean environment and collects what it printed.
import { spawn } from "node:child_process";

export type Finished = { readonly code: number | null; readonly stdout: string; readonly stderr: string };

/** Only PATH and the given variables are passed on: the machine's KUBECONFIG or HOME must never leak in. */
export async function runToEnd(
  binary: string,
  args: readonly string[],
  options: { env?: Record<string, string>; input?: string } = {},
): Promise<Finished> {
  const child = spawn(binary, [...args], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "", ...options.env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  // A command that exits without reading its input (a failure, usually) closes the pipe: EPIPE here is not the
  // error to report, its exit code and stderr below are.
  child.stdin.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") child.emit("error", error);
  });
  child.stdin.end(options.input ?? "");
  return await new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}
