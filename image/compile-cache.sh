#!/usr/bin/env bash
# Node's compile cache of the app, made at build time: V8's code cache of what a `run` start loads (the bundle's one
# file; undici is loaded only later, for a plain-HTTP or HTTP/1.1-only server), in <app-dir>/compile-cache.
# The image points NODE_COMPILE_CACHE at it (image/build.sh) and the bench does the same for dist/bundle, so a start
# deserializes those modules instead of parsing and compiling them. The pod's root filesystem is read-only: Node only
# reads the cache there, and when it cannot use it (another Node, V8 flags on node's command line, another user) it
# compiles as without one and writes nothing (it cannot), silently.
#
# Usage: image/compile-cache.sh <app-dir> [uid] — <app-dir> holds dist/src/cli/main.js (bundle.sh) and package.json,
# with undici in a node_modules on its path; uid: the user the app will run as (default: this one).
#
# - `run` without any credentials loads the run command's modules and exits 1 ("no Kubernetes credentials found")
#   before it does anything: no kubeconfig, no KUBERNETES_SERVICE_HOST, an empty in-cluster root.
# - Portable (NODE_COMPILE_CACHE_PORTABLE): entries are keyed by paths relative to the cache directory, so the
#   cache holds wherever <app-dir> is mounted, as long as node_modules sits at the same place relative to it.
# - No V8 flags on the command line: V8 refuses a cache made under other flags, and the controller sets its own
#   only after loading its modules (--v8-flags). --random-seed is the exception V8 leaves out of that check: fixed,
#   the cache's string hashes are the same from build to build, so the image stays reproducible.
# - Node names the cache's directory after the Node version, architecture, V8's flags and the user id: the
#   directory made here is renamed to <uid>'s, the user the image runs as.
set -euo pipefail
app=$(cd "${1:?usage: image/compile-cache.sh <app-dir> [uid]}" && pwd)
uid=${2:-$(id -u)}
cache="$app/compile-cache"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
rm -rf "$cache"
status=0
env -i PATH="$PATH" HOME="$scratch" CNI_REPAIR_IN_CLUSTER_ROOT="$scratch" \
  NODE_COMPILE_CACHE="$cache" NODE_COMPILE_CACHE_PORTABLE=1 \
  node --random-seed=1 "$app/dist/src/cli/main.js" run >"$scratch/out.log" 2>&1 || status=$?
if [[ $status != 1 ]] || ! grep -q "no Kubernetes credentials found" "$scratch/out.log"; then
  cat "$scratch/out.log" >&2
  echo "compile-cache.sh: expected the credential-less run to exit 1 after loading its modules (got $status)" >&2
  exit 1
fi
made=("$cache"/*)
if [[ ${#made[@]} != 1 || ! -d ${made[0]} ]] || [[ -z $(ls -A "${made[0]}") ]]; then
  echo "compile-cache.sh: node wrote no compile cache into $cache" >&2
  exit 1
fi
[[ ${made[0]} == *-"$uid" ]] || mv "${made[0]}" "${made[0]%-*}-$uid"
chmod -R a+rX "$cache"
