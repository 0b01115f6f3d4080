#!/usr/bin/env bash
# Builds Istio's repair controller (main.go here, istio.io/istio pinned by go.mod/go.sum from the Go module proxy)
# once and caches the binary outside the work tree, like the other Go tools (tools/cached-go-build.sh).
#   build.sh               build if needed; prints the directory holding istio-repair
#   build.sh --cached-only print the directory only if the binary is already cached; exit 1 otherwise (no build)
# The first build compiles istio's dependency tree (Kubernetes client, gRPC, Envoy's protos): ~10-20 minutes on 2
# busy cores with Go's build cache empty; it runs niced, so it can go in the background.
# The cache key is go.mod + go.sum + main.go: a version bump or a change of the main rebuilds, nothing else does.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/cached-go-build.sh
source "$here/../../tools/cached-go-build.sh"

istio_version=$(awk '{ for (i = 1; i < NF; i++) if ($i == "istio.io/istio") { print $(i + 1); exit } }' "$here/go.mod")
sum=$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-12)
target=${CNI_REPAIR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cni-repair}/tools/istio-repair-$sum

if [[ ${1:-} == --cached-only ]]; then
  [[ -x "$target/istio-repair" ]] || exit 1
  echo "$target"
  exit 0
fi
[[ $# -eq 0 ]] || { echo "usage: build.sh [--cached-only]" >&2; exit 2; }

build() { cd "$here" && nice -n 10 go build -trimpath -ldflags "-s -w" -o "$1/istio-repair" .; }
cached_go_build "$target" istio-repair "Istio's repair controller (istio.io/istio $istio_version)" build
