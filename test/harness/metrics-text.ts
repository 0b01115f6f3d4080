// Reads one series out of a /metrics page in Prometheus' text format.

/** The value of the first series of `name` whose labels include `labels` (0 when there is none). */
export function metricValue(body: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels);
  for (const line of body.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const series = Object.fromEntries([...(match[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (wanted.every(([key, value]) => series[key] === value)) return Number(match[3]);
  }
  return 0;
}
