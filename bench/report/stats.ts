// Small statistics for the report: percentiles of samples, and median with range over repeated runs.

/** The q-quantile (0..1) by linear interpolation between closest ranks; NaN for no samples. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  const a = sorted[low] as number;
  const b = sorted[high] as number;
  return a + (b - a) * (position - low);
}

export type Spread = { readonly median: number; readonly min: number; readonly max: number; readonly runs: number };

/** Median with min and max over the finite values (one per run). */
export function spread(values: readonly number[]): Spread {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, runs: 0 };
  return { median: quantile(finite, 0.5), min: Math.min(...finite), max: Math.max(...finite), runs: finite.length };
}

export type LatencySummary = {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly samples: number;
};

export function latencySummary(samples: readonly number[]): LatencySummary {
  return {
    p50: quantile(samples, 0.5),
    p90: quantile(samples, 0.9),
    p99: quantile(samples, 0.99),
    max: samples.length === 0 ? Number.NaN : Math.max(...samples),
    samples: samples.length,
  };
}
