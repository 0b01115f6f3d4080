// Build step (image/code-cache.sh): writes the code cache of a bundled app beside it (code-cache.ts).
// Usage: node --random-seed=1 dist/src/boot/make-code-cache.js <app-dir>/dist/src/cli/app.js
import { readFileSync, writeFileSync } from "node:fs";
import { codeCacheFile, makeCodeCache } from "./code-cache.js";

const app = process.argv[2];
if (app === undefined) {
  console.error("usage: make-code-cache.js <app.js>");
  process.exit(2);
}
// Recorded under a fixed name, not the build's path: the same inputs give the same cache.
writeFileSync(codeCacheFile(app), makeCodeCache(readFileSync(app), "app.js"));
