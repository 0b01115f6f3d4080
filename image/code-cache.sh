#!/usr/bin/env bash
# V8's code cache of the bundled app, made at build time (src/boot/code-cache.ts): every function of
# <app-dir>/dist/src/cli/app.js compiled, in app.js.<arch>.v8cache beside it, which the entry point (main.js) reads
# at each start. Then a start is checked to use it.
#
# Usage: image/code-cache.sh <app-dir> — <app-dir> holds dist/src/cli/{main,app}.js (bundle.sh) and package.json.
#
# - This node must be the one that runs the app: V8 refuses a cache from another V8 version (the start then compiles
#   as without one), and so it does for one made under other V8 flags. The flags the chart puts on node's command
#   line (heap sizes, --no-memory-reducer) leave it valid; the compiler flags are set after the app is loaded.
# - --random-seed is the one flag V8 leaves out of that check: fixed, the cache's string hashes are the same from
#   build to build, so the image stays reproducible.
set -euo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
app=$(cd "${1:?usage: image/code-cache.sh <app-dir>}" && pwd)
[[ -f "$repo_root/dist/src/boot/make-code-cache.js" ]] || { echo "code-cache.sh: run make build first" >&2; exit 1; }
rm -f "$app"/dist/src/cli/app.js.*.v8cache
env -i PATH="$PATH" node --random-seed=1 "$repo_root/dist/src/boot/make-code-cache.js" "$app/dist/src/cli/app.js"
verdict=$(env -i PATH="$PATH" NODE_DEBUG=cni_repair_boot node "$app/dist/src/cli/main.js" version 2>&1 >/dev/null)
if [[ $verdict != *" accepted" ]]; then
  echo "code-cache.sh: a start did not use the code cache: $verdict" >&2
  exit 1
fi
