// A measured process of any kind (a Node controller or a Go binary): spawned, its output lines kept, waited on,
// stopped. ProbedProcess adds the IPC probe of the Node ones; /proc readings (proc-stats.ts) work for all.
import { type ChildProcess, type StdioOptions, spawn } from "node:child_process";
import { createInterface } from "node:readline";

type Waiter = { readonly match: (line: string) => boolean; readonly resolve: (line: string) => void };

export type WatchedProcessOptions = {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  /** stdin and anything past stdout/stderr (e.g. "ipc"); stdout and stderr are always piped. */
  readonly extraStdio?: readonly ("ignore" | "ipc")[];
};

export class WatchedProcess {
  /** performance.now() just before the spawn. */
  readonly startedAt = performance.now();
  readonly lines: string[] = [];
  protected readonly child: ChildProcess;
  readonly #exited: Promise<number | null>;
  #waiters: Waiter[] = [];

  constructor(options: WatchedProcessOptions) {
    const stdio: StdioOptions = ["ignore", "pipe", "pipe", ...(options.extraStdio ?? [])];
    this.child = spawn(options.command, [...options.args], { stdio, env: options.env });
    this.#exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
    for (const stream of [this.child.stdout, this.child.stderr]) {
      if (stream) createInterface({ input: stream }).on("line", (line) => this.#line(line));
    }
  }

  /** The spawn's wall-clock time in milliseconds, comparable with the audit log's timestamps. */
  get startedAtWallMs(): number {
    return performance.timeOrigin + this.startedAt;
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error("process did not start");
    return this.child.pid;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves with the first line (already seen or coming) that matches; rejects on exit or timeout. */
  async waitForLine(match: (line: string) => boolean, timeoutMs: number): Promise<string> {
    const seen = this.lines.find(match);
    if (seen !== undefined) return seen;
    return await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching line within ${timeoutMs} ms`)), timeoutMs);
      const waiter: Waiter = {
        match,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
      };
      this.#waiters.push(waiter);
      void this.#exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`process exited (${code}) before the line:\n${this.lines.slice(-15).join("\n")}`));
      });
    });
  }

  /** SIGTERM, then SIGKILL after the grace period; returns the exit code. */
  async stop(graceMs = 20_000): Promise<number | null> {
    if (!this.running) return this.child.exitCode;
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
    const code = await this.#exited;
    clearTimeout(timer);
    return code;
  }

  #line(line: string): void {
    if (this.lines.length < 50_000) this.lines.push(line);
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) {
      if (waiter.match(line)) waiter.resolve(line);
      else this.#waiters.push(waiter);
    }
  }
}
