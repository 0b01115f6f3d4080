// A measured Node process: spawned with the probe preloaded (a WatchedProcess), IPC requests answered.
import { pathToFileURL } from "node:url";
import type { MemoryReading, ProbeReply, ProbeRequest } from "../probe/preload.js";
import { WatchedProcess } from "./watched-process.js";

const PRELOAD = pathToFileURL(new URL("../probe/preload.js", import.meta.url).pathname).href;

type Omit1<T> = T extends unknown ? Omit<T, "id"> : never;

export type ProbedProcessOptions = {
  readonly script: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  /** Extra Node flags (e.g. --cpu-prof). */
  readonly nodeFlags?: readonly string[];
  /**
   * No probe: spawned exactly as installed, measured from /proc only. The probe's --expose-gc is a V8 flag, and any
   * V8 flag on the command line makes V8 refuse the code caches a start would use (src/cli/v8-flags.ts).
   */
  readonly bare?: boolean;
};

export class ProbedProcess extends WatchedProcess {
  readonly #pending = new Map<number, (reply: ProbeReply) => void>();
  #nextId = 1;
  readonly #bare: boolean;

  constructor(options: ProbedProcessOptions) {
    super({
      command: process.execPath,
      args: [
        ...(options.bare ? [] : ["--expose-gc", "--import", PRELOAD]),
        ...(options.nodeFlags ?? []),
        options.script,
        ...options.args,
      ],
      env: options.env,
      extraStdio: options.bare ? [] : ["ipc"],
    });
    this.#bare = options.bare === true;
    this.child.on("message", (reply: ProbeReply) => {
      this.#pending.get(reply.id)?.(reply);
      this.#pending.delete(reply.id);
    });
  }

  async probe(request: Omit1<ProbeRequest>, timeoutMs = 120_000): Promise<ProbeReply> {
    if (this.#bare) throw new Error(`probe ${request.op}: the process was started without the probe`);
    const id = this.#nextId++;
    const reply = new Promise<ProbeReply>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`probe ${request.op} timed out`)), timeoutMs);
      this.#pending.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
    });
    this.child.send({ ...request, id });
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
}
