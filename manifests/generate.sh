#!/usr/bin/env bash
# Writes the kustomize manifests from the Helm chart (charts/cni-repair), the one source of both: `helm template`
# once per mode, plus the Namespace, the ambient permissions and the monitoring objects on their own.
# Usage: manifests/generate.sh [output-dir]   (default: manifests/; the drift test writes elsewhere and compares)
# CHART overrides the chart directory; HELM the helm binary (default: tools/build.sh helm, cached).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/manifests}
chart=${CHART:-$root/charts/cni-repair}
helm=${HELM:-$("$root/tools/build.sh" helm)/helm}
modes=(cluster per-node label-only dry-run)

header="# Generated from charts/cni-repair by manifests/generate.sh (make manifests): edit the chart, then regenerate."

# One file of rendered objects, under the header; helm's "# Source:" lines say which template each comes from.
render() {
  local file=$1
  shift
  mkdir -p "$(dirname "$file")"
  { echo "$header"; "$helm" template cni-repair "$chart" --namespace cni-repair "$@"; } >"$file"
}

kustomization() {
  local dir=$1 comment=$2
  shift 2
  {
    echo "$header"
    echo "# $comment"
    echo "apiVersion: kustomize.config.k8s.io/v1beta1"
    echo "kind: Kustomization"
    echo "resources:"
    printf '  - %s\n' "$@"
  } >"$out/$dir/kustomization.yaml"
}

# Apart from every mode, so that switching modes (delete one overlay, apply another) never deletes it.
render "$out/namespace/namespace.yaml" --set namespace.create=true --show-only templates/namespace.yaml
kustomization namespace "The namespace, applied once before any overlay: kubectl apply -k manifests/namespace" \
  namespace.yaml

for mode in "${modes[@]}"; do
  render "$out/overlays/$mode/cni-repair.yaml" --set mode="$mode"
  kustomization "overlays/$mode" "Mode $mode (see the chart's values.yaml): kubectl apply -k manifests/overlays/$mode" \
    cni-repair.yaml
done

render "$out/permissions/watch-namespaces/rbac.yaml" --set 'presets={istio-ambient}' \
  --show-only templates/rbac-watch-namespaces.yaml
kustomization permissions/watch-namespaces \
  "Only for --preset istio-ambient: add it next to the overlay you install (namespaces list, watch)." rbac.yaml

render "$out/monitoring/service-monitor.yaml" --set serviceMonitor.enabled=true \
  --show-only templates/service-monitor.yaml
render "$out/monitoring/prometheus-rule.yaml" --set prometheusRule.enabled=true \
  --show-only templates/prometheus-rule.yaml
render "$out/monitoring/dashboard.yaml" --set dashboard.enabled=true --show-only templates/dashboard.yaml
kustomization monitoring \
  "Optional, next to any overlay: ServiceMonitor, PrometheusRule (from alerts.yaml), Grafana dashboard ConfigMap." \
  service-monitor.yaml prometheus-rule.yaml dashboard.yaml
