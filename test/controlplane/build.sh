#!/usr/bin/env bash
# Builds the test control plane's binaries from the Go module proxy and caches them outside the work tree:
#   build.sh [binary...]   the named ones; with no name, all of them
# etcd and kube-apiserver are all the demo and most integration tests start; kubectl renders and applies the
# manifests; kube-controller-manager and kube-scheduler run the whole-cluster e2e tests; kubelet runs the real node
# of the real-node e2e test. Only missing binaries are built, so `make demo` on a fresh machine builds two and
# `make test` later builds the others.
#
# Before building, a binary of the pinned version that is already on the machine is taken instead (linked into the
# cache): from $KUBEBUILDER_ASSETS (setup-envtest's layout: etcd, kube-apiserver, kubectl in one directory), then
# from PATH. "Pinned version" is checked by running it with --version (kubectl: version --client).
# Prints the directory holding the binaries on stdout; progress goes to stderr.
#
# The cache key is the module's go.mod + go.sum, so a version bump rebuilds and nothing else does.
# Each binary is built in a scratch directory and renamed into place when it is complete, so an interrupted build
# never leaves a binary that looks usable.
set -euo pipefail

all_binaries=(etcd kube-apiserver kubectl kube-controller-manager kube-scheduler kubelet)
wanted=("$@")
[[ ${#wanted[@]} -gt 0 ]] || wanted=("${all_binaries[@]}")
for binary in "${wanted[@]}"; do
  [[ " ${all_binaries[*]} " == *" $binary "* ]] || {
    echo "build.sh: unknown binary '$binary' (known: ${all_binaries[*]})" >&2
    exit 2
  }
done

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${CNI_REPAIR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cni-repair}/controlplane

k8s_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
etcd_version=$(awk '$1 == "go.etcd.io/etcd/server/v3" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
sum=$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -c1-12)
target="$cache_root/kube-$k8s_version-etcd-$etcd_version-$sum"

missing() {
  local binary
  for binary in "${wanted[@]}"; do
    [[ -x "$target/$binary" ]] || echo "$binary"
  done
}

# The version a binary reports, in the form go.mod pins it (v1.34.4 / v3.6.5); empty when it cannot say.
reported_version() {
  local path=$1 binary=$2
  case $binary in
    etcd) "$path" --version 2>/dev/null | awk '/^etcd Version:/ { print "v" $3; exit }' ;;
    kubectl) "$path" version --client 2>/dev/null | awk '/^Client Version:/ { print $3; exit }' ;;
    *) "$path" --version 2>/dev/null | awk '$1 == "Kubernetes" { print $2; exit }' ;;
  esac
}

# Links a binary of the pinned version found in KUBEBUILDER_ASSETS or on PATH into the cache; fails if none.
adopt_existing() {
  local binary=$1 pinned candidate
  [[ $binary == etcd ]] && pinned=$etcd_version || pinned=$k8s_version
  for candidate in ${KUBEBUILDER_ASSETS:+"$KUBEBUILDER_ASSETS/$binary"} "$(command -v "$binary" || true)"; do
    [[ -n $candidate && -x $candidate ]] || continue
    [[ $(reported_version "$candidate" "$binary") == "$pinned" ]] || continue
    mkdir -p "$target"
    ln -sfn "$(realpath "$candidate")" "$target/$binary"
    echo "using $candidate ($pinned) for $binary" >&2
    return 0
  done
  return 1
}

if [[ -z $(missing) ]]; then
  echo "$target"
  exit 0
fi
for binary in $(missing); do adopt_existing "$binary" || true; done
if [[ -z $(missing) ]]; then
  echo "$target"
  exit 0
fi

command -v go >/dev/null || { echo "build.sh: Go >= 1.24 is needed to build the test control plane; 'go' is not on PATH" >&2; exit 1; }

mkdir -p "$cache_root"
# One build at a time per cache; a second caller waits and then builds only what is still missing.
exec 9>"$cache_root/.lock"
flock 9
mapfile -t to_build < <(missing)
if [[ ${#to_build[@]} -eq 0 ]]; then
  echo "$target"
  exit 0
fi

scratch=$(mktemp -d "$cache_root/.building.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$target"

not_built=()
for binary in "${all_binaries[@]}"; do
  [[ -x "$target/$binary" || " ${to_build[*]} " == *" $binary "* ]] || not_built+=("$binary")
done
echo "building ${to_build[*]} (Kubernetes $k8s_version, etcd $etcd_version) into $target" >&2
echo "  first time only (kube-apiserver is the long one: 40 min on 2 busy cores with Go's build cache empty)" >&2
[[ ${#not_built[@]} -eq 0 ]] || echo "  not needed now, so not built: ${not_built[*]}" >&2

version_flags="-X k8s.io/component-base/version.gitVersion=$k8s_version"
version_flags+=" -X k8s.io/component-base/version.gitMajor=$(echo "$k8s_version" | cut -d. -f1 | tr -d v)"
version_flags+=" -X k8s.io/component-base/version.gitMinor=$(echo "$k8s_version" | cut -d. -f2)"
version_flags+=" -X k8s.io/component-base/version.gitTreeState=clean"

build() {
  local binary=$1
  case $binary in
    etcd) go build -trimpath -ldflags "-s -w" -o "$scratch/etcd" go.etcd.io/etcd/server/v3 ;;
    # kubectl reports its version from client-go, so it gets the same version stamp there too.
    kubectl) go build -trimpath -ldflags "-s -w $version_flags ${version_flags//component-base/client-go\/pkg}" \
      -o "$scratch/kubectl" k8s.io/kubernetes/cmd/kubectl ;;
    *) go build -trimpath -ldflags "-s -w $version_flags" -o "$scratch/$binary" "k8s.io/kubernetes/cmd/$binary" ;;
  esac
}

cd "$here"
export CGO_ENABLED=0
for binary in "${to_build[@]}"; do
  started=$SECONDS
  build "$binary"
  mv "$scratch/$binary" "$target/$binary"
  echo "  built $binary in $((SECONDS - started)) s" >&2
done
echo "$target"
