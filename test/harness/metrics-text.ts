// Reads series out of a /metrics page in Prometheus' text format.

/** Each series of `name` whose labels include `labels`: its labels and its value, in the page's order. */
export function metricSeries(
  body: string,
  name: string,
  labels: Record<string, string> = {},
): { labels: Record<string, string>; value: number }[] {
  const wanted = Object.entries(labels);
  const found: { labels: Record<string, string>; value: number }[] = [];
  for (const line of body.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const series: Record<string, string> = Object.fromEntries(
      [...(match[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (wanted.every(([key, value]) => series[key] === value)) found.push({ labels: series, value: Number(match[3]) });
  }
  return found;
}

/** The value of the first series of `name` whose labels include `labels` (0 when there is none). */
export function metricValue(body: string, name: string, labels: Record<string, string> = {}): number {
  return metricSeries(body, name, labels)[0]?.value ?? 0;
}
