// "did you mean …?" for a misspelt command, flag or variable: the known word closest by edit distance (the pinned
// fastest-levenshtein), offered only when it is close enough to be a typo rather than another word.
import { closest, distance } from "fastest-levenshtein";

/** The candidate with the smallest edit distance (the first of equals); candidates must not be empty. */
export function closestName(name: string, candidates: readonly string[]): string {
  return closest(name, [...candidates]);
}

/**
 * The closest candidate when at most a third of the word (and at least two edits) away, else undefined:
 * "scna" suggests "scan", "deploy" suggests nothing.
 */
export function suggestion(word: string, candidates: readonly string[]): string | undefined {
  if (candidates.length === 0) return undefined;
  const best = closestName(word, candidates);
  return distance(word, best) <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

/** " (did you mean X?)" or "", to append to an error message. */
export function didYouMean(
  word: string,
  candidates: readonly string[],
  spell: (name: string) => string = String,
): string {
  const best = suggestion(word, candidates);
  return best === undefined ? "" : ` (did you mean ${spell(best)}?)`;
}
