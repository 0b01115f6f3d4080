// Cutting a body into chunks at chosen byte offsets, for readers that must not care where chunks end.

/** Splits bytes at the given offsets (any order, duplicates give empty chunks). */
export function splitAt(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const sorted = [...cuts].map((c) => Math.min(Math.max(c, 0), bytes.length)).sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let start = 0;
  for (const cut of sorted) {
    out.push(bytes.slice(start, cut));
    start = cut;
  }
  out.push(bytes.slice(start));
  return out;
}
