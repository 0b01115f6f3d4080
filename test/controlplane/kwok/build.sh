#!/usr/bin/env bash
# Builds kwok (fake nodes that run pods like kubelets) from the Go module proxy and caches it outside the work
# tree, apart from the control plane: its own module, its own cache key (this module's go.mod + go.sum), so
# neither build can disturb the other. Prints the directory holding the binary on stdout; progress on stderr.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/cached-go-build.sh
source "$here/../../../tools/cached-go-build.sh"

cache_root=${CNI_REPAIR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cni-repair}/kwok
kwok_version=$(awk '$1 == "sigs.k8s.io/kwok" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
sum=$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -c1-12)

build() { cd "$here" && go build -trimpath -ldflags "-s -w" -o "$1/kwok" sigs.k8s.io/kwok/cmd/kwok; }
cached_go_build "$cache_root/kwok-$kwok_version-$sum" kwok "kwok $kwok_version (3-8 minutes on 2 cores)" build
