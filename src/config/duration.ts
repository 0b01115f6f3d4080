// Go-style durations ("500ms", "1m30s") to milliseconds and back, for flags, --help and logs.

const unitMs = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 } as const;
type Unit = keyof typeof unitMs;
/** Largest unit first: the only order parse accepts and the order format writes. */
const units: readonly Unit[] = ["h", "m", "s", "ms"];

export const durationExpectation = "expected a duration like 500ms, 10s, 5m, 1h or 1m30s";

/**
 * Milliseconds for a duration made of integer parts with units h, m, s, ms, each at most once and
 * largest first ("1h", "1m30s", "0s"). Bare numbers, signs, fractions and other units throw:
 * a silent guess ("5" as 5ms or 5s?) is worse than an error at startup.
 */
export function parseDuration(text: string): number {
  if (text === "") throw new RangeError(durationExpectation);
  let total = 0;
  let next = 0; // index into units: a part's unit must come after the previous part's
  // Sticky, so parts must follow each other with nothing between; "ms" is tried before "m".
  const part = /(\d+)(ms|h|m|s)/y;
  while (part.lastIndex < text.length) {
    const match = part.exec(text);
    if (match === null) throw new RangeError(durationExpectation);
    const unit = match[2] as Unit;
    const rank = units.indexOf(unit);
    if (rank < next) throw new RangeError(`${durationExpectation} (units largest first, each once)`);
    next = rank + 1;
    total += Number(match[1]) * unitMs[unit];
  }
  if (!Number.isSafeInteger(total)) throw new RangeError(`${durationExpectation} (too large)`);
  return total;
}

/** The canonical text for a whole number of milliseconds: 90000 → "1m30s", 0 → "0s". */
export function formatDuration(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`not a duration in ms: ${ms}`);
  if (ms === 0) return "0s";
  let rest = ms;
  let text = "";
  for (const unit of units) {
    const count = Math.floor(rest / unitMs[unit]);
    rest -= count * unitMs[unit];
    if (count > 0) text += `${count}${unit}`;
  }
  return text;
}
