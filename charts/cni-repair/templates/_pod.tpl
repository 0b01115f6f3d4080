{{- /*
What the controller's pod (workload.yaml) and the repair CronJob's pod (cronjob.yaml) share: the pod's labels and
annotations, the pod-level settings before placement, the sizing, the container's image and command, NODE_OPTIONS.
*/ -}}

{{/* The pod's labels and annotations. Arguments: the context and the pod's app.kubernetes.io/component. */}}
{{- define "cni-repair.podMetadata" -}}
{{- $ctx := index . 0 -}}
labels:
  {{- include "cni-repair.labels" $ctx | nindent 2 }}
  app.kubernetes.io/component: {{ index . 1 }}
  # No mesh for the controller itself, which must work while the mesh's CNI does not: no sidecar injected, and
  # out of Istio ambient (istio.io/dataplane-mode none opts a pod out of an ambient namespace). podLabels overrides.
  {{- toYaml (merge (dict) $ctx.Values.podLabels (dict
    "sidecar.istio.io/inject" "false"
    "istio.io/dataplane-mode" "none"
  )) | nindent 2 }}
annotations:
  linkerd.io/inject: disabled
  {{- with $ctx.Values.podAnnotations }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* The pod's identity, priority, pull secrets, security context, node selector and affinity. */}}
{{- define "cni-repair.podSettings" -}}
serviceAccountName: {{ include "cni-repair.serviceAccountName" . }}
# Needed: the controller authenticates with this token (in-cluster configuration).
automountServiceAccountToken: true
enableServiceLinks: false
{{- with include "cni-repair.priorityClassName" . }}
priorityClassName: {{ . }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.podSecurityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
The sizing in force, as JSON: the values' own, else the workload's (sizing.daemonSet or sizing.deployment).
Arguments: the context and whether the pod is the per-node DaemonSet's.
*/}}
{{- define "cni-repair.sizing" -}}
{{- $v := (index . 0).Values -}}
{{- $sizing := ternary $v.sizing.daemonSet $v.sizing.deployment (index . 1) -}}
{{- toJson (dict
  "resources" ($v.resources | default $sizing.resources)
  "heapMiB" ($v.heapMiB | default $sizing.heapMiB)
  "nodeOptions" ($v.nodeOptions | default $sizing.nodeOptions | default "")
  "nodeFlags" (ternary $sizing.nodeFlags $v.nodeFlags (kindIs "invalid" $v.nodeFlags))
  "v8Flags" (ternary $sizing.v8Flags $v.v8Flags (kindIs "invalid" $v.v8Flags))
  "v8FlagsAfterSync" (ternary $sizing.v8FlagsAfterSync $v.v8FlagsAfterSync (kindIs "invalid" $v.v8FlagsAfterSync))
) -}}
{{- end -}}

{{/* The container's image, pull policy and (with Node flags) command. Arguments: the context and the sizing. */}}
{{- define "cni-repair.containerImage" -}}
{{- $ctx := index . 0 -}}
image: {{ include "cni-repair.image" $ctx }}
imagePullPolicy: {{ $ctx.Values.image.pullPolicy }}
{{- with (index . 1).nodeFlags }}
# The image's entry point (image/build.sh) with the Node flags that NODE_OPTIONS refuses before the script.
command:
  - /usr/local/bin/node
  {{- range . }}
  - {{ . | quote }}
  {{- end }}
  - /app/dist/src/cli/main.js
{{- end }}
{{- end -}}

{{/* The NODE_OPTIONS variable of the sizing. */}}
{{- define "cni-repair.nodeOptionsEnv" -}}
# The heap cap keeps V8 collecting well below the memory limit; the rest sizes V8 for the mode.
- name: NODE_OPTIONS
  value: {{ trim (printf "--max-old-space-size=%v %s" .heapMiB .nodeOptions) | quote }}
{{- end -}}
