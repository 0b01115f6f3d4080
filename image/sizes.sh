#!/usr/bin/env bash
# Prints the size of each image of an OCI layout's index: compressed (what a node pulls: config + layers) and
# unpacked (the layers' tar contents). Usage: sizes.sh LAYOUT
set -euo pipefail
layout=${1:?usage: sizes.sh LAYOUT}

blob() { echo "$layout/blobs/${1/://}"; }
# json FILE EXPRESSION: evaluates a JavaScript expression over the parsed file (bound to j), one result per line.
json() { node -e 'const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log([].concat(eval(process.argv[2])).join("\n"))' "$1" "$2"; }

index=$(json "$layout/index.json" 'j.manifests[0].digest')
while read -r digest platform; do
  manifest=$(blob "$digest")
  compressed=$(json "$manifest" 'j.config.size + j.layers.reduce((sum, l) => sum + l.size, 0)')
  unpacked=0
  for layer in $(json "$manifest" 'j.layers.map((l) => l.digest)'); do
    unpacked=$((unpacked + $(gzip -dc "$(blob "$layer")" | wc -c)))
  done
  printf '%s: %s MB compressed, %s MB unpacked\n' "$platform" \
    "$(awk -v b="$compressed" 'BEGIN { printf "%.1f", b / 1e6 }')" "$(awk -v b="$unpacked" 'BEGIN { printf "%.1f", b / 1e6 }')"
done < <(json "$(blob "$index")" 'j.manifests.map((m) => `${m.digest} ${m.platform.os}/${m.platform.architecture}`)')
