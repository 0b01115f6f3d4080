#!/usr/bin/env bash
# The controller's compiled JavaScript as one CommonJS file (esbuild, pinned in package.json) instead of ~300 ES
# modules: every start resolves, reads and compiles each module file separately, and that is most of a per-node
# start's CPU. Usage: image/bundle.sh <app-dir> — writes <app-dir>/dist/src/cli/main.js from dist/src (make build
# first); the caller adds package.json and dist/revision beside them (src/cli/version.ts reads them relative to it).
# The app itself is dist/src/cli/app.js; main.js is its entry point (src/boot/main.ts), which runs it from the code
# cache image/code-cache.sh makes beside it.
#
# - CommonJS, not ES modules: Node's ES module loader costs ~5 ms of every start to set up, and an ES import of a
#   built-in (node:fs, node:util) makes its module namespace, which runs every lazy getter of that built-in (file
#   streams, fs/promises, readline, worker_threads, parseArgs...). A require() returns the object as it is. A
#   package.json beside main.js says so (the app's own package.json says "module").
# - The commands' own modules are evaluated only when their command runs (esbuild keeps a dynamically imported
#   module behind a lazy wrapper): `run` runs no scan or explain output code (yaml).
# - @kubernetes/client-node stays a package in node_modules, required only for a kubeconfig (never in cluster), and
#   so does undici (plain HTTP and HTTP/1.1-only servers): src/kube/undici-connections.ts requires its Agent through
#   createRequire, which esbuild leaves alone. So does yaml, which only scan's and explain's output load: its
#   functions would be a fifth of the code cache (code-cache.sh) that every start reads.
# - import.meta.url (version.ts, undici-connections.ts) is the file's URL, from __filename.
# - Whitespace and comments go (--minify-whitespace): V8 keeps the source text, ~1 MiB of heap here.
#   Names stay as written, so stack traces still name their functions (their line numbers are the bundle's).
# - process.env.NODE_ENV is "production" in the bundled packages: winston's debug logger (@dabh/diagnostics) then
#   loads its production build, not the development one and its colour tables (~3 ms of every start's CPU).
set -euo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:?usage: image/bundle.sh <app-dir>}
[[ -f "$repo_root/dist/src/cli/main.js" ]] || { echo "bundle.sh: dist/src is missing: run make build first" >&2; exit 1; }
# compile-cache: Node's cache an older bundle.sh run left here (the bench would still point Node at it).
rm -rf "$out/dist/src" "$out/compile-cache"
bundle() {
  "$repo_root/node_modules/.bin/esbuild" "$1" \
    --bundle --format=cjs --platform=node --target=node24 \
    --outfile="$2" \
    --external:@kubernetes/client-node --external:yaml \
    --banner:js="const importMetaUrl = require('node:url').pathToFileURL(__filename).href;" \
    --define:import.meta.url=importMetaUrl \
    --define:process.env.NODE_ENV='"production"' \
    --minify-whitespace --log-level=warning
}
bundle "$repo_root/dist/src/cli/main.js" "$out/dist/src/cli/app.js"
# app.js is compiled inside a function (src/boot/code-cache.ts), where the #! line esbuild keeps is not allowed.
sed -i '1{/^#!/d}' "$out/dist/src/cli/app.js"
bundle "$repo_root/dist/src/boot/main.js" "$out/dist/src/cli/main.js"
echo '{ "type": "commonjs" }' >"$out/dist/src/cli/package.json"
