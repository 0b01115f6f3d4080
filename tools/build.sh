#!/usr/bin/env bash
# Builds one Go tool pinned by its own module under tools/<name>/ (go.mod's `tool` line names the package, go.sum
# pins every dependency) and caches the binary outside the work tree. Used by the Makefile, the tests and the release
# workflow alike, so all of them run the same helm and actionlint.
# Usage: tools/build.sh <name>   (prints the directory holding the binary <name> on stdout; progress on stderr)
#
# The cache key is the module's go.mod + go.sum: a version bump rebuilds, nothing else does. The build goes to a
# scratch directory renamed into place only when the binary is there, so an interrupted build leaves nothing usable.
set -euo pipefail

name=${1:?usage: tools/build.sh <name> (a directory under tools/ with a go.mod)}
module=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$name
[[ -f "$module/go.mod" ]] || { echo "tools/build.sh: no tools/$name/go.mod" >&2; exit 2; }
package=$(awk '$1 == "tool" { print $2; exit }' "$module/go.mod")
[[ -n "$package" ]] || { echo "tools/build.sh: tools/$name/go.mod has no tool line" >&2; exit 2; }

cache_root=${CNI_REPAIR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cni-repair}/tools
sum=$(cat "$module/go.mod" "$module/go.sum" | sha256sum | cut -c1-12)
target="$cache_root/$name-$sum"

complete() { [[ -x "$target/$name" ]]; }

if complete; then
  echo "$target"
  exit 0
fi

command -v go >/dev/null || { echo "tools/build.sh: Go >= 1.26 is needed to build $name; 'go' is not on PATH" >&2; exit 1; }

mkdir -p "$cache_root"
# One build at a time per cache; a second caller waits and then finds the finished binary.
exec 9>"$cache_root/.lock"
flock 9
if complete; then
  echo "$target"
  exit 0
fi

scratch=$(mktemp -d "$cache_root/.building.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

echo "building $package from the Go module proxy (first time only)" >&2
cd "$module"
export CGO_ENABLED=0
started=$SECONDS
go build -trimpath -ldflags "-s -w" -o "$scratch/$name" "$package"
echo "built $name in $((SECONDS - started)) s" >&2

rm -rf "$target"
mv "$scratch" "$target"
trap - EXIT
echo "$target"
