// A server process started by the harness: logs to a file, dies with its parent, stops on request.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";

const SETPRIV = "/usr/bin/setpriv";

export class ManagedProcess {
  readonly name: string;
  readonly logFile: string;
  readonly #child: ChildProcess;
  readonly #exited: Promise<number | null>;
  #running = true;

  constructor(name: string, binary: string, args: readonly string[], logFile: string) {
    this.name = name;
    this.logFile = logFile;
    const log = openSync(logFile, "a");
    // setpriv makes the kernel SIGKILL the server when this Node process dies for any reason,
    // even SIGKILL, so an interrupted test run never leaves etcd or kube-apiserver behind.
    const [command, commandArgs] = existsSync(SETPRIV)
      ? [SETPRIV, ["--pdeathsig", "SIGKILL", "--", binary, ...args]]
      : [binary, [...args]];
    this.#child = spawn(command, commandArgs, { stdio: ["ignore", log, log] });
    closeSync(log);
    this.#exited = new Promise((resolve) => {
      this.#child.once("exit", (code) => {
        this.#running = false;
        resolve(code);
      });
      this.#child.once("error", () => {
        this.#running = false;
        resolve(null);
      });
    });
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get running(): boolean {
    return this.#running;
  }

  get exited(): Promise<number | null> {
    return this.#exited;
  }

  /** Sends the signal and waits; escalates to SIGKILL after the grace period. */
  async stop(signal: NodeJS.Signals = "SIGTERM", graceMs = 10_000): Promise<void> {
    if (!this.#running) return;
    this.#child.kill(signal);
    const timer = setTimeout(() => this.#child.kill("SIGKILL"), graceMs);
    await this.#exited;
    clearTimeout(timer);
  }

  /** Synchronous last resort for exit handlers, where nothing can be awaited. */
  killNow(): void {
    if (this.#running) this.#child.kill("SIGKILL");
  }

  /** The end of the log, for error messages when the server fails to come up. */
  logTail(lines = 30): string {
    try {
      return readFileSync(this.logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
    } catch {
      return "(no log)";
    }
  }
}
