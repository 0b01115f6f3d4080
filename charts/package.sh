#!/usr/bin/env bash
# `helm package` of charts/cni-repair with the chart version and appVersion set to one release version: what the
# release workflow pushes (make chart-package) and what the install test installs.
# Usage: charts/package.sh <version> <output-dir>   (prints the .tgz path)
set -euo pipefail

version=${1:?usage: charts/package.sh <version> <output-dir>}
out=${2:?usage: charts/package.sh <version> <output-dir>}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
helm=${HELM:-$("$root/tools/build.sh" helm)/helm}

mkdir -p "$out"
# Lint renders the templates, so it needs the value the chart requires (no image is published yet).
"$helm" lint --strict "$root/charts/cni-repair" --set image.repository=registry.example.com/cni-repair >&2
"$helm" package "$root/charts/cni-repair" --version "$version" --app-version "$version" --destination "$out" >&2
echo "$out/cni-repair-$version.tgz"
