#!/usr/bin/env bash
# Builds Istio's data-plane pieces from Istio's own sources (istio.io/istio pinned by go.mod/go.sum here, the same pin
# as bench/istio-repair) once and caches them outside the work tree, like the control plane:
#   install-cni  the CNI node agent (installs the plugin and its chained config, runs Istio's repair controller)
#   istio-cni    the CNI plugin the agent copies onto the node
#   pilot-agent  whose `istio-iptables --run-validation` mode is the injector's istio-validation init container
#   build.sh               build if needed; prints the directory holding the three binaries
#   build.sh --cached-only print the directory only if the binaries are already cached; exit 1 otherwise (no build)
# The cold build compiles Istio's whole agent tree (Kubernetes client, gRPC, Envoy's protos, OpenTelemetry): see
# docs/development.md for how long it takes; it runs niced, so it can go in the background.
# The cache key is go.mod + go.sum: a version bump rebuilds, nothing else does.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/cached-go-build.sh
source "$here/../../tools/cached-go-build.sh"

istio_version=$(awk '{ for (i = 1; i < NF; i++) if ($i == "istio.io/istio") { print $(i + 1); exit } }' "$here/go.mod")
sum=$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -c1-12)
target=${CNI_REPAIR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cni-repair}/tools/istio-dataplane-$sum
binaries=(install-cni istio-cni pilot-agent)

if [[ ${1:-} == --cached-only ]]; then
  for binary in "${binaries[@]}"; do [[ -x "$target/$binary" ]] || exit 1; done
  echo "$target"
  exit 0
fi
[[ $# -eq 0 ]] || { echo "usage: build.sh [--cached-only]" >&2; exit 2; }

# One `go build` for the three, so shared packages compile once; pilot-agent is checked last by cached_go_build, the
# other two are checked here so a half-built directory is never published.
build() {
  cd "$here"
  nice -n 10 go build -trimpath -ldflags "-s -w -X istio.io/istio/pkg/version.buildVersion=$istio_version" \
    -o "$1/" istio.io/istio/cni/cmd/install-cni istio.io/istio/cni/cmd/istio-cni istio.io/istio/pilot/cmd/pilot-agent
  [[ -x "$1/install-cni" && -x "$1/istio-cni" ]]
}
cached_go_build "$target" pilot-agent "Istio's CNI agent, plugin and pilot-agent (istio.io/istio $istio_version)" build
