#!/usr/bin/env bash
# Builds one Go tool pinned by its own module under tools/<name>/ (go.mod's `tool` line names the package, go.sum
# pins every dependency) and caches the binary outside the work tree. Used by the Makefile, the tests and the release
# workflow alike, so all of them run the same helm and actionlint.
# Usage: tools/build.sh <name>   (prints the directory holding the binary <name> on stdout; progress on stderr)
#
# The cache key is the module's go.mod + go.sum: a version bump rebuilds, nothing else does.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/cached-go-build.sh
source "$here/cached-go-build.sh"

name=${1:?usage: tools/build.sh <name> (a directory under tools/ with a go.mod)}
module=$here/$name
[[ -f "$module/go.mod" ]] || { echo "tools/build.sh: no tools/$name/go.mod" >&2; exit 2; }
package=$(awk '$1 == "tool" { print $2; exit }' "$module/go.mod")
[[ -n "$package" ]] || { echo "tools/build.sh: tools/$name/go.mod has no tool line" >&2; exit 2; }

cache_root=${CNI_REPAIR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cni-repair}/tools
sum=$(cat "$module/go.mod" "$module/go.sum" | sha256sum | cut -c1-12)

build() { cd "$module" && go build -trimpath -ldflags "-s -w" -o "$1/$name" "$package"; }
cached_go_build "$cache_root/$name-$sum" "$name" "$package" build
