// One short statement per metric: its name, help, label names (typed from the literal) and buckets, on one registry.
import type { Registry } from "prom-client";
import { Counter, Gauge, Histogram } from "./prom-client.js";

export type MetricFactory = ReturnType<typeof metricFactory>;

export function metricFactory(registry: Registry) {
  const registers = [registry];
  return {
    /** `collect` runs at scrape time: for a series tallied elsewhere and moved in when read. */
    counter: <const L extends string = never>(
      name: string,
      help: string,
      labelNames: readonly L[] = [],
      collect?: (this: Counter<L>) => void,
    ) => new Counter<L>({ name, help, labelNames, registers, ...(collect && { collect }) }),
    /** `collect` runs at scrape time: for a gauge read from the caches rather than kept up to date. */
    gauge: <const L extends string = never>(
      name: string,
      help: string,
      labelNames: readonly L[] = [],
      collect?: (this: Gauge<L>) => void,
    ) => new Gauge<L>({ name, help, labelNames, registers, ...(collect && { collect }) }),
    histogram: <const L extends string = never>(
      name: string,
      help: string,
      buckets: readonly number[],
      labelNames: readonly L[] = [],
    ) => new Histogram<L>({ name, help, labelNames, buckets: [...buckets], registers }),
  };
}
