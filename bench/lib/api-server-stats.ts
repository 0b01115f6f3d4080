// The API server's own cost, read two ways: from its /metrics (what a cluster's monitoring sees: the Go process
// collector's CPU in ticks, its RSS, the Go heap, the watches it serves) and from /proc (CPU to the nanosecond,
// RSS sampled as often as asked, so a peak during a rollout is seen).
import type { BenchClient } from "./kube-client.js";
import { rssBytes } from "./proc-stats.js";

export type ApiServerMetrics = {
  /** process_cpu_seconds_total (10 ms ticks). */
  readonly cpuSeconds: number;
  /** process_resident_memory_bytes. */
  readonly rssBytes: number;
  /** go_memstats_heap_inuse_bytes, when exposed. */
  readonly heapInuseBytes: number | undefined;
  /** Watches being served: apiserver_longrunning_requests{verb="WATCH"} summed. */
  readonly watches: number;
  /** apiserver_request_total by "VERB resource[/subresource]" (codes summed): what a rollout asked of it. */
  readonly requests: Readonly<Record<string, number>>;
};

const label = (line: string, name: string): string => new RegExp(`[{,]${name}="([^"]*)"`).exec(line)?.[1] ?? "";

/** apiserver_request_total summed by verb and resource (and subresource), over codes, scopes and versions. */
function requestCounts(text: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of text.split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    const sub = label(line, "subresource");
    const key = `${label(line, "verb")} ${label(line, "resource")}${sub ? `/${sub}` : ""}`;
    counts[key] = (counts[key] ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return counts;
}

/** The requests counted between two readings, those that changed only. */
export function requestsBetween(before: ApiServerMetrics, after: ApiServerMetrics): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, count] of Object.entries(after.requests)) {
    const added = count - (before.requests[key] ?? 0);
    if (added > 0) out[key] = added;
  }
  return out;
}

/** The value of an unlabelled sample, or the sum of a metric's samples whose labels include `labels`. */
function sampleSum(text: string, name: string, labels = ""): number | undefined {
  let sum: number | undefined;
  for (const line of text.split("\n")) {
    if (!line.startsWith(name) || (line[name.length] !== " " && line[name.length] !== "{")) continue;
    if (labels && !line.includes(labels)) continue;
    sum = (sum ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

export async function readApiServerMetrics(client: BenchClient): Promise<ApiServerMetrics> {
  const text = await client.text("/metrics");
  const need = (name: string) => {
    const value = sampleSum(text, name);
    if (value === undefined) throw new Error(`the API server's /metrics has no ${name}`);
    return value;
  };
  return {
    cpuSeconds: need("process_cpu_seconds_total"),
    rssBytes: need("process_resident_memory_bytes"),
    heapInuseBytes: sampleSum(text, "go_memstats_heap_inuse_bytes"),
    watches: sampleSum(text, "apiserver_longrunning_requests", 'verb="WATCH"') ?? 0,
    requests: requestCounts(text),
  };
}

/** Samples a process's RSS from /proc every `everyMs` until stopped, for its peak. */
export class RssSampler {
  #peak = 0;
  readonly #pid: number;
  readonly #timer: NodeJS.Timeout;

  constructor(pid: number, everyMs = 200) {
    this.#pid = pid;
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), everyMs);
  }

  /** Stops sampling; the peak over the whole time, a last reading included. */
  stop(): number {
    clearInterval(this.#timer);
    this.#sample();
    return this.#peak;
  }

  #sample(): void {
    this.#peak = Math.max(this.#peak, rssBytes(this.#pid));
  }
}
