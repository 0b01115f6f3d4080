// What the image is built from, as the repository pins it: image/inputs.lock (Node binaries, Debian packages) and
// the production packages of package-lock.json (those `npm ci --omit=dev` installs).
import { readFileSync } from "node:fs";
import { repositoryFile } from "./binaries.js";

export type PinnedPackage = { readonly name: string; readonly version: string };

/** The lock's lines of one kind for one architecture (Debian's "all" packages count for every architecture). */
export function pinnedInputs(kind: "node" | "deb", architecture: string): PinnedPackage[] {
  return readFileSync(repositoryFile("image/inputs.lock"), "utf8")
    .split("\n")
    .map((line) => line.split(" "))
    .filter(([lineKind, , , arch]) => lineKind === kind && (arch === architecture || arch === "all"))
    .map(([, name = "", version = ""]) => ({ name, version }));
}

/** Every non-dev package of package-lock.json, by its installed name (the last node_modules/ segment). */
export function productionNpmPackages(): PinnedPackage[] {
  const lock = JSON.parse(readFileSync(repositoryFile("package-lock.json"), "utf8")) as {
    packages: Record<string, { version?: string; dev?: boolean }>;
  };
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path !== "" && !entry.dev)
    .map(([path, entry]) => ({
      name: path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length),
      version: entry.version ?? "",
    }));
}
