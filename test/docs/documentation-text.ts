// The text of the documentation files (DOCUMENTATION, folders expanded to their .md files), for tests that check
// what the prose claims against the repository.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { repositoryFile } from "../harness/binaries.js";
import { DOCUMENTATION } from "./markdown-links.js";

export type DocumentationFile = { readonly path: string; readonly text: string };

/** Every documentation file, its path relative to the repository root. */
export function documentationFiles(): DocumentationFile[] {
  const root = dirname(repositoryFile("package.json"));
  const expand = (path: string): string[] =>
    statSync(join(root, path)).isDirectory()
      ? readdirSync(join(root, path), { recursive: true, encoding: "utf8" })
          .filter((name) => name.endsWith(".md"))
          .map((name) => join(path, name))
      : [path];
  return DOCUMENTATION.flatMap(expand).map((path) => ({
    path: relative(root, join(root, path)),
    text: readFileSync(join(root, path), "utf8"),
  }));
}

const NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
const NUMBER_WORDS_HIGH = ["eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen"];

/** The number a word or numeral stands for ("Eight", "11"), or undefined when it is no number. */
export function numberOf(word: string): number | undefined {
  if (/^\d+$/.test(word)) return Number(word);
  const index = [...NUMBER_WORDS, ...NUMBER_WORDS_HIGH].indexOf(word.toLowerCase());
  return index < 0 ? undefined : index;
}

export type CountClaim = { readonly where: string; readonly phrase: string; readonly count: number };

/** Each "<number> <noun>" in the files (the noun a regular expression source, matched case-insensitively). */
export function countClaims(files: readonly DocumentationFile[], noun: string): CountClaim[] {
  const pattern = new RegExp(`\\b(\\w+)\\s+(?:${noun})`, "gi");
  return files.flatMap((file) =>
    [...file.text.matchAll(pattern)].flatMap((match) => {
      const count = numberOf(match[1] ?? "");
      if (count === undefined) return [];
      const line = file.text.slice(0, match.index).split("\n").length;
      return [{ where: `${file.path}:${line}`, phrase: match[0], count }];
    }),
  );
}
