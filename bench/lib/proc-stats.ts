// Memory and CPU of any process read the same way from /proc, so a Go binary and a Node one are measured alike
// (no forced GC, nothing asked of the process).
import { readdirSync, readFileSync } from "node:fs";

/** Resident set size in bytes (VmRSS). */
export function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!match) throw new Error(`/proc/${pid}/status has no VmRSS`);
  return Number(match[1]) * 1024;
}

/**
 * CPU seconds the process's threads have run so far, from each thread's schedstat (nanoseconds on the CPU):
 * /proc/<pid>/stat counts in 10 ms ticks, too coarse for an idle window. Threads that already exited are not
 * counted; neither Go's runtime nor Node ends its threads while running.
 */
export function cpuSeconds(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return ns / 1e9;
}
