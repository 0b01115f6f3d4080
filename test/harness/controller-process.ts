// Runs the built `cni-repair` command as its own process, the way users run it, and reads what it says.
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { metricValue } from "./metrics-text.js";
import { type Finished, runToEnd } from "./run-to-end.js";
import { GiveUp, waitFor } from "./wait.js";

const MAIN = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src", "cli", "main.js");

/** How long one request to the controller's HTTP server (/readyz, /metrics) may take. */
const GET_TIMEOUT_MS = 10_000;

export type LogLine = { readonly level: string; readonly msg: string; readonly [field: string]: unknown };

export type ControllerStartOptions = {
  readonly args: readonly string[];
  /** Environment on top of a minimal one (PATH, HOME); KUBECONFIG is not inherited from the test process. */
  readonly env?: Record<string, string>;
  /** Wait for /readyz (the initial list is done) before returning; default true. */
  readonly waitReady?: boolean;
  /** What runs the CLI, its arguments appended: default this Node and the built main.js (e.g. `podman run … image`). */
  readonly launcher?: readonly string[];
  /** Node flags before the script, as a workload's command sets them (default launcher only). */
  readonly nodeFlags?: readonly string[];
  /** How long to wait for /readyz; default 20 s. */
  readonly readyTimeoutMs?: number;
};

export class ControllerProcess {
  /** Started since the last forgetStarted(): what a failed test's report shows. */
  static readonly #recent: ControllerProcess[] = [];
  readonly logs: LogLine[] = [];
  readonly stderrText: string[] = [];
  readonly #child: ChildProcessByStdio<null, Readable, Readable>;
  readonly #exited: Promise<number | null>;
  #url: string | undefined;

  private constructor(child: ChildProcessByStdio<null, Readable, Readable>) {
    this.#child = child;
    this.#exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
    createInterface({ input: child.stderr }).on("line", (line) => {
      this.stderrText.push(line);
      try {
        const parsed = JSON.parse(line) as LogLine;
        this.logs.push(parsed);
        if (parsed.msg === "http server listening" && typeof parsed.url === "string") {
          this.#url = parsed.url.replace("0.0.0.0", "127.0.0.1");
        }
      } catch {
        // Not a JSON log line (e.g. a config error message): kept in stderrText.
      }
    });
  }

  /** Starts the controller with JSON logs on a free port. */
  static async start(options: ControllerStartOptions): Promise<ControllerProcess> {
    const [command = process.execPath, ...prefix] = options.launcher ?? [
      process.execPath,
      ...(options.nodeFlags ?? []),
      MAIN,
    ];
    // run is explicit (a bare cni-repair prints help): an installed workload's args start with it, others are flags.
    const run = options.args[0] === "run" ? [] : ["run"];
    const child = spawn(
      command,
      [...prefix, ...run, "--http-address=127.0.0.1", "--http-port=0", "--log-format=json", ...options.args],
      {
        stdio: ["ignore", "pipe", "pipe"],
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...options.env },
      },
    );
    const controller = new ControllerProcess(child);
    ControllerProcess.#recent.push(controller);
    if (options.waitReady ?? true) {
      try {
        await waitFor(
          "the controller to be ready",
          async () => {
            if (child.exitCode !== null)
              throw new GiveUp(`controller exited ${child.exitCode}:\n${controller.output()}`);
            return (await controller.get("/readyz")).status === 200;
          },
          { timeoutMs: options.readyTimeoutMs ?? 20_000 },
        );
      } catch (error) {
        if (error instanceof GiveUp) throw error;
        // Nobody holds this process yet: stopped here, or it would run on (and act in later tests' namespaces);
        // what it said goes with the failure, or the one clue why it never got ready is lost.
        await controller.stop("SIGTERM", 5_000);
        throw new ControllerNotReady(controller, error);
      }
    }
    return controller;
  }

  /** Every controller started since forgetStarted() (root hooks call it before each test). */
  static started(): readonly ControllerProcess[] {
    return ControllerProcess.#recent;
  }

  static forgetStarted(): void {
    ControllerProcess.#recent.length = 0;
  }

  get url(): string {
    if (!this.#url) throw new Error("the controller has not started its HTTP server");
    return this.#url;
  }

  get exited(): Promise<number | null> {
    return this.#exited;
  }

  async get(path: string): Promise<{ status: number; body: string }> {
    if (!this.#url) return { status: 0, body: "" };
    // Bounded: a process that accepts and never answers must fail the probe, not hang the wait around it.
    const response = await fetch(`${this.#url}${path}`, { signal: AbortSignal.timeout(GET_TIMEOUT_MS) });
    return { status: response.status, body: await response.text() };
  }

  /** The value of one series on /metrics (0 when absent), e.g. metric("cni_repair_pods_repaired_total", {type: "delete", result: "success"}). */
  async metric(name: string, labels: Record<string, string> = {}): Promise<number> {
    return metricValue((await this.get("/metrics")).body, name, labels);
  }

  /** Log lines whose msg is `msg` and whose fields include `fields`. */
  logsWith(msg: string, fields: Record<string, unknown> = {}): LogLine[] {
    return this.logs.filter(
      (line) => line.msg === msg && Object.entries(fields).every(([key, value]) => line[key] === value),
    );
  }

  output(): string {
    return this.stderrText.join("\n");
  }

  /** Sends a signal and returns at once (SIGSTOP freezes the process as a stalled VM or a paused container would). */
  signal(signal: NodeJS.Signals): void {
    this.#child.kill(signal);
  }

  /** Sends the signal and waits for the exit code; SIGKILL after the grace period. */
  async stop(signal: NodeJS.Signals = "SIGTERM", graceMs = 15_000): Promise<number | null> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return this.#child.exitCode;
    this.#child.kill(signal);
    const timer = setTimeout(() => this.#child.kill("SIGKILL"), graceMs);
    const code = await this.#exited;
    clearTimeout(timer);
    return code;
  }
}

/** A controller that did not get ready in time: stopped, and its log is in the message. */
export class ControllerNotReady extends Error {
  readonly controller: ControllerProcess;

  constructor(controller: ControllerProcess, cause: unknown) {
    const message = cause instanceof Error ? cause.message : String(cause);
    super(`${message}; the controller's log:\n${controller.output()}`, { cause });
    this.controller = controller;
  }
}

/** Runs the command to completion (for flag errors, --help, --version, scan). */
export async function runCommand(args: readonly string[], env: Record<string, string> = {}): Promise<Finished> {
  return await runToEnd(process.execPath, [MAIN, ...args], { env: { HOME: process.env.HOME ?? "/tmp", ...env } });
}
