// A dependency-free SVG line chart: a few series, linear or log x axis, ticks, legend.

export type Series = {
  readonly name: string;
  readonly points: readonly (readonly [number, number])[];
  readonly color: string;
  readonly dashed?: boolean;
  /** Draw as a step function (for CDFs and cumulative counts). */
  readonly step?: boolean;
};

export type Chart = {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly Series[];
  readonly xLog?: boolean;
};

const W = 760;
const H = 440;
const M = { left: 70, right: 20, top: 40, bottom: 110 };

const esc = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function niceTicks(min: number, max: number, count = 6): number[] {
  if (!(max > min)) return [min];
  const raw = (max - min) / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * magnitude >= raw) ?? 10) * magnitude;
  const ticks: number[] = [];
  for (let t = Math.ceil(min / step) * step; t <= max + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

function logTicks(min: number, max: number): number[] {
  const ticks: number[] = [];
  for (let e = Math.floor(Math.log10(min)); 10 ** e <= max * 1.0001; e++) {
    for (const m of [1, 2, 5]) if (m * 10 ** e >= min * 0.9999 && m * 10 ** e <= max * 1.0001) ticks.push(m * 10 ** e);
  }
  return ticks;
}

const label = (v: number): string =>
  Math.abs(v) >= 1000 ? `${Number((v / 1000).toPrecision(3))}k` : String(Number(v.toPrecision(3)));

export function lineChart(chart: Chart): string {
  const all = chart.series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const xs = all.map(([x]) => x).filter((x) => !chart.xLog || x > 0);
  const ys = all.map(([, y]) => y);
  const xMin = chart.xLog ? Math.min(...xs) : Math.min(0, ...xs);
  const xMax = Math.max(...xs, xMin + 1);
  const yMax = Math.max(...ys, 1e-9) * 1.05;
  const fx = (x: number) =>
    M.left +
    (chart.xLog
      ? (Math.log10(x) - Math.log10(xMin)) / Math.max(Math.log10(xMax) - Math.log10(xMin), 1e-9)
      : (x - xMin) / (xMax - xMin)) *
      (W - M.left - M.right);
  const fy = (y: number) => H - M.bottom - (y / yMax) * (H - M.top - M.bottom);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="15">${esc(chart.title)}</text>`,
  ];
  for (const t of chart.xLog ? logTicks(xMin, xMax) : niceTicks(xMin, xMax)) {
    out.push(`<line x1="${fx(t)}" x2="${fx(t)}" y1="${M.top}" y2="${H - M.bottom}" stroke="#eee"/>`);
    out.push(`<text x="${fx(t)}" y="${H - M.bottom + 16}" text-anchor="middle">${label(t)}</text>`);
  }
  for (const t of niceTicks(0, yMax)) {
    out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${fy(t)}" y2="${fy(t)}" stroke="#eee"/>`);
    out.push(`<text x="${M.left - 6}" y="${fy(t) + 4}" text-anchor="end">${label(t)}</text>`);
  }
  out.push(
    `<rect x="${M.left}" y="${M.top}" width="${W - M.left - M.right}" height="${H - M.top - M.bottom}" fill="none" stroke="#999"/>`,
    `<text x="${(M.left + W - M.right) / 2}" y="${H - M.bottom + 36}" text-anchor="middle">${esc(chart.xLabel)}</text>`,
    `<text transform="translate(16 ${(M.top + H - M.bottom) / 2}) rotate(-90)" text-anchor="middle">${esc(chart.yLabel)}</text>`,
  );
  chart.series.forEach((s, i) => {
    const pts = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y) && (!chart.xLog || x > 0));
    const coords: string[] = [];
    pts.forEach(([x, y], k) => {
      const prev = pts[k - 1];
      if (s.step && prev) coords.push(`${fx(x).toFixed(1)},${fy(prev[1]).toFixed(1)}`);
      coords.push(`${fx(x).toFixed(1)},${fy(y).toFixed(1)}`);
    });
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : "";
    if (coords.length > 0) {
      out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2"${dash} points="${coords.join(" ")}"/>`);
    }
    if (!s.step) for (const [x, y] of pts) out.push(`<circle cx="${fx(x)}" cy="${fy(y)}" r="3" fill="${s.color}"/>`);
    const lx = M.left + (i % 2) * 340;
    const ly = H - M.bottom + 56 + Math.floor(i / 2) * 16;
    out.push(
      `<line x1="${lx}" x2="${lx + 24}" y1="${ly - 4}" y2="${ly - 4}" stroke="${s.color}" stroke-width="2"${dash}/>`,
    );
    out.push(`<text x="${lx + 30}" y="${ly}">${esc(s.name)}</text>`);
  });
  out.push("</svg>");
  return out.join("\n");
}
