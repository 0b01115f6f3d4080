// How often a property's generated inputs reach each branch: fast-check's statistics, read back instead of printed,
// so that a property test can assert it reaches the branch it exists for (a generator that drifts away fails it).
import fc from "fast-check";

/** The percentage of `numRuns` generated values that `classify` puts under each label (labels without dots). */
export function branchShares<T>(
  arb: fc.Arbitrary<T>,
  classify: (value: T) => string,
  numRuns = 1_000,
): ReadonlyMap<string, number> {
  const shares = new Map<string, number>();
  fc.statistics(arb, classify, {
    numRuns,
    logger: (line) => {
      const match = /^([^.]+)\.+(\d+(?:\.\d+)?)%$/.exec(line);
      if (!match?.[1] || !match[2]) throw new Error(`unexpected fast-check statistics line: ${line}`);
      shares.set(match[1], Number(match[2]));
    },
  });
  return shares;
}
