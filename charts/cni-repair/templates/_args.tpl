{{/* The controller's command line from the values: the mode's fixed flags, then every flag whose value is set. */}}
{{- define "cni-repair.args" -}}
{{- include "cni-repair.commandArgs" (list . "run") -}}
{{- end -}}

{{/*
The flags of a command (run, or scan for the repair CronJob) from the values. scan refuses run's own flags (the
HTTP server, shutdown, election, the startup taints' re-adding, the admission policy check: cni-repair help scan),
so they are left out of its line.
*/}}
{{- define "cni-repair.commandArgs" -}}
{{- $ctx := index . 0 -}}
{{- $command := index . 1 -}}
{{- $runOnly := list "http-port" "shutdown-timeout" "leader-elect" "leader-election-id" "lease-duration" "renew-deadline" "retry-period" "startup-taint-not-ready-after" "startup-taint-max-share" "admission-policies" -}}
{{- $v := $ctx.Values -}}
{{- $flags := list
  (list "http-port" $v.metrics.port)
  (list "shutdown-timeout" (printf "%ds" (int $v.shutdownTimeoutSeconds)))
  (list "log-format" $v.logFormat)
  (list "log-level" $v.logLevel)
  (list "leader-elect" (ternary "true" "false" (eq (include "cni-repair.elects" $ctx) "true")))
-}}
{{- if include "cni-repair.elects" $ctx -}}
{{- $flags = concat $flags (list
  (list "leader-election-id" (include "cni-repair.leaseName" $ctx))
  (list "lease-duration" $v.leaderElection.leaseDuration)
  (list "renew-deadline" $v.leaderElection.renewDeadline)
  (list "retry-period" $v.leaderElection.retryPeriod)
) -}}
{{- end -}}
{{- $flags = concat $flags (list
  (list "custom-init-container" $v.customRule.initContainer)
  (list "custom-exit-codes" $v.customRule.exitCodes)
  (list "custom-termination-message" $v.customRule.terminationMessage)
  (list "custom-require-annotation" $v.customRule.requireAnnotation)
  (list "custom-require-label" $v.customRule.requireLabel)
  (list "custom-rule-name" $v.customRule.name)
  (list "label-key" $v.brokenPodLabel.key)
  (list "label-value" $v.brokenPodLabel.value)
  (list "namespaces" $v.scope.namespaces)
  (list "exclude-namespaces" $v.scope.excludeNamespaces)
  (list "label-selector" $v.scope.labelSelector)
  (list "field-selector" $v.scope.fieldSelector)
  (list "max-deletions-per-minute" $v.limits.maxDeletionsPerMinute)
  (list "max-outage-deletions-per-minute" $v.limits.maxOutageDeletionsPerMinute)
  (list "deletion-burst" $v.limits.deletionBurst)
  (list "max-inflight-deletions-per-node" $v.limits.maxInflightDeletionsPerNode)
  (list "max-inflight-deletions-per-namespace" $v.limits.maxInflightDeletionsPerNamespace)
  (list "delete-bare-pods" (ternary "true" "" $v.limits.deleteBarePods))
  (list "max-broken-fraction" $v.limits.maxBrokenFraction)
  (list "storm-min-broken" $v.limits.stormMinBroken)
  (list "storm-window" $v.limits.stormWindow)
  (list "loop-backoff" $v.limits.loopBackoff)
  (list "loop-backoff-max" $v.limits.loopBackoffMax)
  (list "workers" $v.limits.workers)
  (list "max-retries" $v.limits.maxRetries)
  (list "cni-agent-gate" $v.cniAgent.gate)
  (list "cni-agent-min-ready" $v.cniAgent.minReady)
  (list "cni-agent-selector" $v.cniAgent.selector)
  (list "cni-agent-namespace" (include "cni-repair.agentNamespaces" $ctx))
  (list "istio-repair" $v.istioRepair)
  (list "startup-taint" $v.startupTaint.mode)
  (list "startup-taint-keys" $v.startupTaint.keys)
  (list "startup-taint-not-ready-after" $v.startupTaint.notReadyAfter)
  (list "startup-taint-max-share" $v.startupTaint.maxShare)
  (list "ambient-action" $v.ambient.action)
  (list "ambient-enroll-grace" $v.ambient.enrollGrace)
  (list "ambient-excluded-namespaces" $v.ambient.excludedNamespaces)
  (list "ambient-pod-selector" $v.ambient.podSelector)
  (list "ambient-namespace-selector" $v.ambient.namespaceSelector)
  (list "ambient-opt-out" $v.ambient.optOut)
  (list "ztunnel-selector" $v.ambient.ztunnelSelector)
  (list "ztunnel-namespace" $v.ambient.ztunnelNamespace)
  (list "admission-policies" (include "cni-repair.admissionPolicyNames" $ctx | fromJsonArray))
) -}}
{{- /* Always given: an empty list (--preset=) turns the built-in rules off for a custom rule alone. */}}
- {{ printf "--preset=%s" (join "," $v.presets) | toJson }}
{{- range $flags }}
{{- if or (eq $command "run") (not (has (index . 0) $runOnly)) }}
{{- include "cni-repair.flag" . }}
{{- end }}
{{- end }}
{{- end -}}
