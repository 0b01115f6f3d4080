// Loaded into each measured controller with --import: answers memory, CPU-profile and heap-snapshot requests over IPC.

import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { getHeapSpaceStatistics, writeHeapSnapshot } from "node:v8";

export type ProbeRequest =
  | { readonly id: number; readonly op: "memory" }
  | { readonly id: number; readonly op: "cpu" }
  | { readonly id: number; readonly op: "profile-start" }
  | { readonly id: number; readonly op: "profile-stop"; readonly path: string }
  | { readonly id: number; readonly op: "heap-snapshot"; readonly path: string };

export type MemoryReading = {
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  /** Memory of C++ objects bound to JS ones (buffers included). */
  readonly external: number;
  readonly arrayBuffers: number;
  /** Committed (size) and used bytes per V8 heap space: where heapTotal − heapUsed sits. */
  readonly spaces: Record<string, { readonly size: number; readonly used: number }>;
};

export type ProbeReply = {
  /** CPU microseconds used so far, user + system, all threads (getrusage). */
  readonly cpuUs?: number;
  readonly id: number;
  readonly ok: boolean;
  readonly memory?: MemoryReading;
  readonly error?: string;
};

const gc = (globalThis as { gc?: () => void }).gc;
let session: Session | undefined;

async function handle(request: ProbeRequest): Promise<ProbeReply> {
  switch (request.op) {
    case "memory": {
      // Two full collections: what is left is what the process actually keeps.
      gc?.();
      gc?.();
      const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
      const spaces = Object.fromEntries(
        getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }]),
      );
      return { id: request.id, ok: true, memory: { rss, heapUsed, heapTotal, external, arrayBuffers, spaces } };
    }
    case "cpu": {
      const { user, system } = process.cpuUsage();
      return { id: request.id, ok: true, cpuUs: user + system };
    }
    case "profile-start":
      session = new Session();
      session.connect();
      await session.post("Profiler.enable");
      await session.post("Profiler.setSamplingInterval", { interval: 200 });
      await session.post("Profiler.start");
      return { id: request.id, ok: true };
    case "profile-stop": {
      if (!session) return { id: request.id, ok: false, error: "no profile running" };
      const { profile } = await session.post("Profiler.stop");
      writeFileSync(request.path, JSON.stringify(profile));
      session.disconnect();
      session = undefined;
      return { id: request.id, ok: true };
    }
    case "heap-snapshot":
      writeHeapSnapshot(request.path);
      return { id: request.id, ok: true };
  }
}

if (process.send) {
  process.on("message", (message: ProbeRequest) => {
    handle(message)
      .catch((error: unknown) => ({ id: message.id, ok: false, error: String(error) }))
      .then((reply) => process.send?.(reply));
  });
  // The channel must not keep the controller alive once it has shut down.
  process.channel?.unref();
}
