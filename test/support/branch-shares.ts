// How often a property's generated inputs reach each branch: fast-check's statistics, read back instead of printed,
// so that a property test can assert it reaches the branch it exists for (a generator that drifts away fails it).
import fc from "fast-check";

/** The percentage of `numRuns` generated values that `classify` puts under each label (labels without dots). */
const SEED = 20_261_205;

export function branchShares<T>(
  arb: fc.Arbitrary<T>,
  classify: (value: T) => string,
  numRuns = 10_000,
): ReadonlyMap<string, number> {
  const shares = new Map<string, number>();
  fc.statistics(arb, classify, {
    numRuns,
    // A fixed seed: the shares describe the arbitrary, and a share near its bound must not pass or fail by luck
    // (1,000 unseeded runs put policy.test's delete share anywhere from under 5 % to 9 %).
    seed: SEED,
    logger: (line) => {
      const match = /^([^.]+)\.+(\d+(?:\.\d+)?)%$/.exec(line);
      if (!match?.[1] || !match[2]) throw new Error(`unexpected fast-check statistics line: ${line}`);
      shares.set(match[1], Number(match[2]));
    },
  });
  return shares;
}
