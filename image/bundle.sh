#!/usr/bin/env bash
# The controller's compiled JavaScript as a few ES modules (esbuild, pinned in package.json) instead of ~300 files:
# every start resolves, reads and compiles each module file separately, and that is most of a per-node start's CPU.
# Usage: image/bundle.sh <app-dir> — writes <app-dir>/dist/src/cli/main.js and its chunks from dist/src (make build
# first); the caller adds package.json and dist/revision beside them (src/cli/version.ts reads them relative to it).
#
# - --splitting keeps the commands' own modules apart: `run` loads no scan/explain output, and the kubeconfig loader
#   stays behind its dynamic import.
# - @kubernetes/client-node stays a package in node_modules, imported only for a kubeconfig (never in cluster), and
#   so does undici (plain HTTP and HTTP/1.1-only servers): src/kube/undici-connections.ts requires its Agent through
#   createRequire, which esbuild leaves alone.
# - The bundled CommonJS packages (winston, prom-client) require Node's built-in modules; an ES module has no
#   `require`, so each output file gets one from createRequire.
# - Whitespace and comments go (--minify-whitespace): V8 keeps every module's source text, ~1 MiB of heap here.
#   Names stay as written, so stack traces still name their functions (their line numbers are the bundle's).
# - process.env.NODE_ENV is "production" in the bundled packages: winston's debug logger (@dabh/diagnostics) then
#   loads its production build, not the development one and its colour tables (~3 ms of every start's CPU).
set -euo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:?usage: image/bundle.sh <app-dir>}
[[ -f "$repo_root/dist/src/cli/main.js" ]] || { echo "bundle.sh: dist/src is missing: run make build first" >&2; exit 1; }
rm -rf "$out/dist/src"
"$repo_root/node_modules/.bin/esbuild" "$repo_root/dist/src/cli/main.js" \
  --bundle --splitting --format=esm --platform=node --target=node24 \
  --outdir="$out/dist/src/cli" --chunk-names='[name]-[hash]' \
  --external:@kubernetes/client-node \
  --banner:js="import { createRequire as bundleCreateRequire } from 'node:module'; const require = bundleCreateRequire(import.meta.url);" \
  --define:process.env.NODE_ENV='"production"' \
  --minify-whitespace --log-level=warning
