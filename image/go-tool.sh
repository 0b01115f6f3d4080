#!/usr/bin/env bash
# Builds one Go command at a pinned version from the Go module proxy and caches it outside the work tree, like
# test/controlplane/build.sh does for the control plane (main.version carries the version, for tools that report
# it). Prints the binary's path on stdout; progress on stderr.
#   image/go-tool.sh github.com/google/go-containerregistry/cmd/crane v0.22.1
set -euo pipefail

package=${1:?usage: go-tool.sh <go package of the command> <version>}
version=${2:?usage: go-tool.sh <go package of the command> <version>}
name=${package##*/}
cache_root=${CNI_REPAIR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cni-repair}/tools
target="$cache_root/$name-$version"

[[ -x "$target/$name" ]] && { echo "$target/$name"; exit 0; }
command -v go >/dev/null || { echo "go-tool.sh: Go is needed to build $name $version; 'go' is not on PATH" >&2; exit 1; }

mkdir -p "$cache_root"
# One build per tool at a time; a second caller waits and then finds the finished binary.
exec 9>"$target.lock"
flock 9
[[ -x "$target/$name" ]] && { echo "$target/$name"; exit 0; }

scratch=$(mktemp -d "$cache_root/.building.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
echo "building $name $version from the Go module proxy (first time only)" >&2
started=$SECONDS
CGO_ENABLED=0 GOBIN="$scratch" GOFLAGS=-buildvcs=false go install -trimpath -ldflags "-s -w -X main.version=$version" "$package@$version"
echo "built $name in $((SECONDS - started)) s" >&2
rm -rf "$target"
mv "$scratch" "$target"
trap - EXIT
echo "$target/$name"
