// A measured Node process: spawned with the probe preloaded, its output lines kept, IPC requests answered.
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import type { MemoryReading, ProbeReply, ProbeRequest } from "../probe/preload.js";

const PRELOAD = pathToFileURL(new URL("../probe/preload.js", import.meta.url).pathname).href;

type Waiter = { readonly match: (line: string) => boolean; readonly resolve: (line: string) => void };
type Omit1<T> = T extends unknown ? Omit<T, "id"> : never;

export type ProbedProcessOptions = {
  readonly script: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  /** Extra Node flags (e.g. --cpu-prof). */
  readonly nodeFlags?: readonly string[];
};

export class ProbedProcess {
  readonly startedAt = performance.now();
  readonly lines: string[] = [];
  readonly #child: ChildProcess;
  readonly #exited: Promise<number | null>;
  readonly #pending = new Map<number, (reply: ProbeReply) => void>();
  #waiters: Waiter[] = [];
  #nextId = 1;

  constructor(options: ProbedProcessOptions) {
    this.#child = spawn(
      process.execPath,
      ["--expose-gc", "--import", PRELOAD, ...(options.nodeFlags ?? []), options.script, ...options.args],
      { stdio: ["ignore", "pipe", "pipe", "ipc"], env: options.env },
    );
    this.#exited = new Promise((resolve) => this.#child.once("exit", (code) => resolve(code)));
    this.#child.on("message", (reply: ProbeReply) => {
      this.#pending.get(reply.id)?.(reply);
      this.#pending.delete(reply.id);
    });
    for (const stream of [this.#child.stdout, this.#child.stderr]) {
      if (stream) createInterface({ input: stream }).on("line", (line) => this.#line(line));
    }
  }

  get pid(): number {
    if (this.#child.pid === undefined) throw new Error("process did not start");
    return this.#child.pid;
  }

  get running(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null;
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

  async probe(request: Omit1<ProbeRequest>, timeoutMs = 120_000): Promise<ProbeReply> {
    const id = this.#nextId++;
    const reply = new Promise<ProbeReply>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`probe ${request.op} timed out`)), timeoutMs);
      this.#pending.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
    });
    this.#child.send({ ...request, id });
    const answer = await reply;
    if (!answer.ok) throw new Error(`probe ${request.op} failed: ${answer.error}`);
    return answer;
  }

  async memory(): Promise<MemoryReading> {
    const { memory } = await this.probe({ op: "memory" });
    if (!memory) throw new Error("probe returned no memory reading");
    return memory;
  }

  /** CPU seconds the process has used so far (all threads), microsecond resolution. */
  async cpuSeconds(): Promise<number> {
    const { cpuUs } = await this.probe({ op: "cpu" });
    if (cpuUs === undefined) throw new Error("probe returned no CPU reading");
    return cpuUs / 1e6;
  }

  /** SIGTERM, then SIGKILL after the grace period; returns the exit code. */
  async stop(graceMs = 20_000): Promise<number | null> {
    if (!this.running) return this.#child.exitCode;
    this.#child.kill("SIGTERM");
    const timer = setTimeout(() => this.#child.kill("SIGKILL"), graceMs);
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
