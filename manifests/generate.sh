#!/usr/bin/env bash
# Writes the kustomize manifests from the Helm chart (charts/cni-repair), the one source of both: `helm template`
# once per mode, plus the Namespace, the ambient permissions and the monitoring objects on their own, and copies of
# the chart's alerts.yaml and dashboard.json.
# Usage: manifests/generate.sh [output-dir]   (default: manifests/; the drift test writes elsewhere and compares)
# CHART overrides the chart directory; HELM the helm binary (default: tools/build.sh helm, cached).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/manifests}
chart=${CHART:-$root/charts/cni-repair}
helm=${HELM:-$("$root/tools/build.sh" helm)/helm}
modes=(cluster per-node label-only dry-run)

header="# Generated from charts/cni-repair by manifests/generate.sh (make manifests): edit the chart, then regenerate."
# The chart requires image.repository (no image is published yet): the overlays name the repository the release
# workflow will publish to; users point it at their own with kustomize's images: (docs/operations.md).
image=(--set image.repository=ghcr.io/cni-repair/cni-repair)

# One file of rendered objects, under the header; helm's "# Source:" lines say which template each comes from.
render() {
  local file=$1
  shift
  mkdir -p "$(dirname "$file")"
  { echo "$header"; "$helm" template cni-repair "$chart" --namespace cni-repair "${image[@]}" "$@"; } >"$file"
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

# The first object of a rendering (helm's "---" separates them), without the separator.
first_object() {
  awk '/^---$/ { n++; next } n <= 1' "$1"
}

# The workload's --preset argument (args[1], after run: see workload.yaml) as the chart renders it with these values.
preset_arg() {
  "$helm" template cni-repair "$chart" --namespace cni-repair "${image[@]}" "$@" --show-only templates/workload.yaml |
    grep -m1 -o '"--preset=[^"]*"'
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

# One kustomize Component per combination of the built-in rules, for any mode overlay: what the chart's `presets`
# value changes, from the chart itself. The controller's --preset (args[1], after run, replaced only if it is still the
# default's, so two preset components on one overlay fail instead of one silently winning), the meshed-pods admission
# policy that allows deleting exactly those meshes' pods, and for istio-ambient the permission to watch namespaces.
default_preset=$(preset_arg)
combinations=(istio linkerd istio-ambient istio,linkerd istio,istio-ambient linkerd,istio-ambient
  istio,linkerd,istio-ambient)
for presets in "${combinations[@]}"; do
  dir=presets/${presets//,/+}
  values=(--set "presets={$presets}")
  render "$out/$dir/rendered-policy.yaml" "${values[@]}" --show-only templates/admission-policy-meshed-pods.yaml
  first_object "$out/$dir/rendered-policy.yaml" >"$out/$dir/meshed-pods-policy.yaml"
  rm "$out/$dir/rendered-policy.yaml"
  resources=()
  if [[ ,$presets, == *,istio-ambient,* ]]; then
    render "$out/$dir/rbac-watch-namespaces.yaml" "${values[@]}" --show-only templates/rbac-watch-namespaces.yaml
    resources=(rbac-watch-namespaces.yaml)
  fi
  {
    echo "$header"
    echo "# Presets $presets for any mode overlay, in your kustomization: components: [<this directory>]."
    echo "apiVersion: kustomize.config.k8s.io/v1alpha1"
    echo "kind: Component"
    if ((${#resources[@]})); then
      echo "resources:"
      printf '  - %s\n' "${resources[@]}"
    fi
    echo "patches:"
    echo "  - path: meshed-pods-policy.yaml"
    echo "  - target: { kind: Deployment|DaemonSet, name: cni-repair }"
    echo "    patch: |-"
    echo "      - { op: test, path: /spec/template/spec/containers/0/args/1, value: $default_preset }"
    echo "      - { op: replace, path: /spec/template/spec/containers/0/args/1, value: $(preset_arg "${values[@]}") }"
    # The repair CronJob's pass, when its component came first (nothing to patch otherwise).
    echo "  - target: { kind: CronJob, name: cni-repair-repair }"
    echo "    patch: |-"
    echo "      - { op: test, path: /spec/jobTemplate/spec/template/spec/containers/0/args/1, value: $default_preset }"
    echo "      - { op: replace, path: /spec/jobTemplate/spec/template/spec/containers/0/args/1, value: $(preset_arg "${values[@]}") }"
    # Without the istio rule nothing reads Istio's repair settings: no ClusterRole for them.
    if [[ ,$presets, != *,istio,* ]]; then
      for kind in ClusterRole ClusterRoleBinding; do
        echo "  - patch: |-"
        echo "      \$patch: delete"
        echo "      apiVersion: rbac.authorization.k8s.io/v1"
        echo "      kind: $kind"
        echo "      metadata: { name: cni-repair-istio-repair }"
      done
    fi
  } >"$out/$dir/kustomization.yaml"
done

# The plain rules file and dashboard, for Prometheus and Grafana without the Operator: copies of the chart's, the one
# source (a link out of the chart would leave a packaged or vendored chart without them).
mkdir -p "$out/monitoring"
cp "$chart/files/alerts.yaml" "$chart/files/dashboard.json" "$out/monitoring/"
# The repair CronJob (chart value cronJob.enabled), one Component per mode that has one (per-node has none: each
# node's instance repairs its own node), to add next to that mode's overlay, before any preset component.
for mode in cluster label-only dry-run; do
  dir=repair-cronjob/$mode
  render "$out/$dir/cronjob.yaml" --set mode="$mode" --set cronJob.enabled=true --show-only templates/cronjob.yaml
  {
    echo "$header"
    echo "# The scheduled repair pass (scan --repair) of the $mode overlay, in your kustomization: components: [<this"
    echo "# directory>], listed before any preset component (which then sets the pass's --preset too)."
    echo "apiVersion: kustomize.config.k8s.io/v1alpha1"
    echo "kind: Component"
    echo "resources:"
    echo "  - cronjob.yaml"
  } >"$out/$dir/kustomization.yaml"
done

render "$out/monitoring/service-monitor.yaml" --set serviceMonitor.enabled=true \
  --show-only templates/service-monitor.yaml
render "$out/monitoring/prometheus-rule.yaml" --set prometheusRule.enabled=true \
  --show-only templates/prometheus-rule.yaml
render "$out/monitoring/dashboard.yaml" --set dashboard.enabled=true --show-only templates/dashboard.yaml
kustomization monitoring \
  "Optional, next to any overlay: ServiceMonitor, PrometheusRule (from alerts.yaml), Grafana dashboard ConfigMap." \
  service-monitor.yaml prometheus-rule.yaml dashboard.yaml
