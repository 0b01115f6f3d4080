#!/usr/bin/env bash
# Builds one Go command at a pinned version from the Go module proxy and caches it outside the work tree
# (main.version carries the version, for tools that report it). Prints the binary's path on stdout; progress on
# stderr.
#   image/go-tool.sh github.com/google/go-containerregistry/cmd/crane v0.22.1
set -euo pipefail
# shellcheck source=tools/cached-go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/../tools/cached-go-build.sh"

package=${1:?usage: go-tool.sh <go package of the command> <version>}
version=${2:?usage: go-tool.sh <go package of the command> <version>}
name=${package##*/}
cache_root=${CNI_REPAIR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cni-repair}/tools

build() {
  GOBIN="$1" GOFLAGS=-buildvcs=false go install -trimpath -ldflags "-s -w -X main.version=$version" "$package@$version"
}
target=$(cached_go_build "$cache_root/$name-$version" "$name" "$name $version" build)
echo "$target/$name"
