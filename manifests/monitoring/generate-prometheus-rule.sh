#!/bin/sh
# Writes prometheus-rule.yaml: the Prometheus Operator's PrometheusRule around alerts.yaml, the one source of the
# alerting rules. Run it after editing alerts.yaml (a unit test fails while the two differ); --stdout prints instead.
set -eu
cd "$(dirname "$0")"

render() {
  cat <<'HEADER'
# Generated from alerts.yaml by generate-prometheus-rule.sh; edit alerts.yaml and run the script.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: cni-repair
  labels:
    app.kubernetes.io/name: cni-repair
spec:
HEADER
  # alerts.yaml's top level (groups:) becomes spec's: indent every non-empty line, drop the file's own comments.
  sed -e '/^#/d' -e 's/^\(.\)/  \1/' alerts.yaml
}

if [ "${1:-}" = "--stdout" ]; then
  render
else
  render >prometheus-rule.yaml
fi
