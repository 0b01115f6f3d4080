#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kubectl (which renders kustomize overlays), and kube-controller-manager and
# kube-scheduler (for the whole-cluster e2e tests) from the Go module proxy and caches them outside the work tree.
# Prints the directory holding the binaries on stdout; progress goes to stderr.
#
# The cache key is the module's go.mod + go.sum, so a version bump rebuilds and nothing else does.
# A build goes to a scratch directory that is renamed into place only when every binary is there,
# so an interrupted build never leaves a cached directory that looks usable.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${CNI_REPAIR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cni-repair}/controlplane

k8s_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
etcd_version=$(awk '$1 == "go.etcd.io/etcd/server/v3" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
sum=$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -c1-12)
target="$cache_root/kube-$k8s_version-etcd-$etcd_version-$sum"

complete() {
  local binary
  for binary in kube-apiserver etcd kubectl kube-controller-manager kube-scheduler; do
    [[ -x "$target/$binary" ]] || return 1
  done
}

if complete; then
  echo "$target"
  exit 0
fi

command -v go >/dev/null || { echo "build.sh: Go >= 1.24 is needed to build the test control plane; 'go' is not on PATH" >&2; exit 1; }

mkdir -p "$cache_root"
# One build at a time per cache; a second caller waits and then finds the finished binaries.
exec 9>"$cache_root/.lock"
flock 9
if complete; then
  echo "$target"
  exit 0
fi

scratch=$(mktemp -d "$cache_root/.building.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

echo "building kube-apiserver, kube-controller-manager, kube-scheduler and kubectl $k8s_version and etcd $etcd_version (first time only; 10-25 minutes on 2 cores)" >&2
version_flags="-X k8s.io/component-base/version.gitVersion=$k8s_version"
version_flags+=" -X k8s.io/component-base/version.gitMajor=$(echo "$k8s_version" | cut -d. -f1 | tr -d v)"
version_flags+=" -X k8s.io/component-base/version.gitMinor=$(echo "$k8s_version" | cut -d. -f2)"
version_flags+=" -X k8s.io/component-base/version.gitTreeState=clean"

cd "$here"
export CGO_ENABLED=0
started=$SECONDS
go build -trimpath -ldflags "-s -w $version_flags" -o "$scratch/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
go build -trimpath -ldflags "-s -w $version_flags" -o "$scratch/kube-controller-manager" \
  k8s.io/kubernetes/cmd/kube-controller-manager
go build -trimpath -ldflags "-s -w $version_flags" -o "$scratch/kube-scheduler" k8s.io/kubernetes/cmd/kube-scheduler
go build -trimpath -ldflags "-s -w" -o "$scratch/etcd" go.etcd.io/etcd/server/v3
# kubectl reports its version from client-go, so it gets the same version stamp there too.
go build -trimpath -ldflags "-s -w $version_flags ${version_flags//component-base/client-go\/pkg}" \
  -o "$scratch/kubectl" k8s.io/kubernetes/cmd/kubectl
echo "built in $((SECONDS - started)) s" >&2

rm -rf "$target"
mv "$scratch" "$target"
trap - EXIT
echo "$target"
