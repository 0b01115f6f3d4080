#!/usr/bin/env bash
# Builds kwok (fake nodes that run pods like kubelets) from the Go module proxy and caches it outside the work
# tree, apart from the control plane: its own module, its own cache key, so neither build can disturb the other.
# Prints the directory holding the binary on stdout; progress goes to stderr.
#
# The cache key is this module's go.mod + go.sum. A build goes to a scratch directory that is renamed into place
# only when the binary is there, so an interrupted build never leaves a cached directory that looks usable.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${CNI_REPAIR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cni-repair}/kwok

kwok_version=$(awk '$1 == "sigs.k8s.io/kwok" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
sum=$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -c1-12)
target="$cache_root/kwok-$kwok_version-$sum"

complete() { [[ -x "$target/kwok" ]]; }

if complete; then
  echo "$target"
  exit 0
fi

command -v go >/dev/null || { echo "kwok/build.sh: Go >= 1.26 is needed to build kwok; 'go' is not on PATH" >&2; exit 1; }

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

echo "building kwok $kwok_version (first time only; 3-8 minutes on 2 cores)" >&2
cd "$here"
export CGO_ENABLED=0
started=$SECONDS
go build -trimpath -ldflags "-s -w" -o "$scratch/kwok" sigs.k8s.io/kwok/cmd/kwok
echo "built in $((SECONDS - started)) s" >&2

rm -rf "$target"
mv "$scratch" "$target"
trap - EXIT
echo "$target"
