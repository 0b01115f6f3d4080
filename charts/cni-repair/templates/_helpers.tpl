{{/* The chart's name, or nameOverride: app.kubernetes.io/name and, in the full name, what a release name is tested for. */}}
{{- define "cni-repair.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The release's full name, the name of every object: fullnameOverride, else the release name, or
"<release>-<name>" when the release name does not contain the name.
*/}}
{{- define "cni-repair.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "cni-repair.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "cni-repair.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "cni-repair.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name: the ServiceAccount to run as, when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Deployment modes elect a leader; per-node runs one controller per node. */}}
{{- define "cni-repair.isDaemonSet" -}}
{{- if eq .Values.mode "per-node" }}true{{ end -}}
{{- end -}}

{{- define "cni-repair.component" -}}
{{- if include "cni-repair.isDaemonSet" . }}per-node{{ else }}cluster{{ end -}}
{{- end -}}

{{- define "cni-repair.elects" -}}
{{- if and (not (include "cni-repair.isDaemonSet" .)) .Values.leaderElection.enabled }}true{{ end -}}
{{- end -}}

{{/* The controller's --mode for each chart mode. */}}
{{- define "cni-repair.controllerMode" -}}
{{- get (dict "cluster" "delete" "per-node" "delete" "label-only" "label" "dry-run" "report") .Values.mode -}}
{{- end -}}

{{/* Pod permissions per mode: delete (the repair, and the dry-run delete of a report) and label (label mode, bare pods). */}}
{{- define "cni-repair.deletesPods" -}}
{{- if has .Values.mode (list "cluster" "per-node" "dry-run") }}true{{ end -}}
{{- end -}}

{{- define "cni-repair.labelsPods" -}}
{{- if has .Values.mode (list "cluster" "per-node" "label-only") }}true{{ end -}}
{{- end -}}

{{- define "cni-repair.watchesNamespaces" -}}
{{- if has "istio-ambient" .Values.presets }}true{{ end -}}
{{- end -}}

{{/*
The PriorityClass the pod runs with: priorityClass.name, else (created) one per release, "<fullname>-critical", so
two releases never share or fight over one; none when neither. priorityClassName is the value's old, deprecated name.
*/}}
{{- define "cni-repair.priorityClassName" -}}
{{- if .Values.priorityClassName -}}
{{- .Values.priorityClassName -}}
{{- else if .Values.priorityClass.name -}}
{{- .Values.priorityClass.name -}}
{{- else if .Values.priorityClass.create -}}
{{- printf "%s-critical" (include "cni-repair.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- /* The istio preset defers to Istio's own repair unless istioRepair is "ignore". */ -}}
{{- define "cni-repair.readsIstioRepair" -}}
{{- if and (has "istio" .Values.presets) (ne .Values.istioRepair "ignore") }}true{{ end -}}
{{- end -}}

{{- /* --cni-agent-namespace: cniAgent.namespace for every rule, then cniAgent.namespaces' rule=namespace entries. */ -}}
{{- define "cni-repair.agentNamespaces" -}}
{{- $entries := list -}}
{{- with .Values.cniAgent.namespace }}{{ $entries = append $entries . }}{{ end -}}
{{- range $rule, $namespace := .Values.cniAgent.namespaces }}
{{- $entries = append $entries (printf "%s=%s" $rule $namespace) -}}
{{- end -}}
{{- join "," $entries -}}
{{- end -}}

{{- /* Where Istio's repair settings are read when pinned (the istio rule's agent namespace); empty: found anywhere. */ -}}
{{- define "cni-repair.istioNamespace" -}}
{{- $perRule := .Values.cniAgent.namespaces | default dict -}}
{{- get $perRule "istio" | default .Values.cniAgent.namespace -}}
{{- end -}}

{{- define "cni-repair.leaseName" -}}
{{- default (include "cni-repair.fullname" .) .Values.leaderElection.id -}}
{{- end -}}

{{- define "cni-repair.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cni-repair.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* On every object: what an uninstall or a kustomize user selects by. */}}
{{- define "cni-repair.labels" -}}
{{ include "cni-repair.selectorLabels" . }}
app.kubernetes.io/part-of: cni-repair
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "cni-repair.workloadSelectorLabels" -}}
{{ include "cni-repair.selectorLabels" . }}
app.kubernetes.io/component: {{ include "cni-repair.component" . }}
{{- end -}}

{{/*
The controller image. image.repository has no default while no release has published an image: a clear error
instead of pods stuck pulling an image that does not exist.
*/}}
{{- define "cni-repair.image" -}}
{{- $repository := required "image.repository is required: no cni-repair image has been published yet. Build and push one (make image IMAGE_PUSH=registry.example.com/cni-repair:<version>), then --set image.repository=registry.example.com/cni-repair" .Values.image.repository -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag -}}
{{- if .Values.image.digest -}}
{{ $repository }}:{{ $tag }}@{{ .Values.image.digest }}
{{- else -}}
{{ $repository }}:{{ $tag }}
{{- end -}}
{{- end -}}

{{/* One RBAC role bound cluster-wide to the controller: a ClusterRole and its ClusterRoleBinding. */}}
{{- define "cni-repair.clusterRole" -}}
{{- $ctx := index . 0 -}}
{{- $suffix := index . 1 -}}
{{- $rules := index . 2 -}}
{{- $name := printf "%s-%s" (include "cni-repair.fullname" $ctx) $suffix -}}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $name }}
  labels:
    {{- include "cni-repair.labels" $ctx | nindent 4 }}
rules:
  {{- $rules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $name }}
  labels:
    {{- include "cni-repair.labels" $ctx | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $name }}
subjects:
  - kind: ServiceAccount
    name: {{ include "cni-repair.serviceAccountName" $ctx }}
    namespace: {{ $ctx.Release.Namespace }}
{{- end -}}

{{/* "- --flag=value" for a value that is set: null, "" and [] leave the controller's default. Lists join with commas. */}}
{{- define "cni-repair.flag" -}}
{{- $name := index . 0 -}}
{{- $value := index . 1 -}}
{{- $text := "" -}}
{{- if kindIs "slice" $value -}}
{{- $text = join "," $value -}}
{{- else if and (kindIs "float64" $value) (eq $value (float64 (int64 $value))) -}}
{{- /* YAML numbers arrive as floats: whole ones print as integers, not 1e+06. */ -}}
{{- $text = printf "%d" (int64 $value) -}}
{{- else if not (kindIs "invalid" $value) -}}
{{- $text = toString $value -}}
{{- end -}}
{{- if ne $text "" }}
- {{ printf "--%s=%s" $name $text | toJson }}
{{- end -}}
{{- end -}}

{{/* The user name the API server gives this chart's ServiceAccount: what the admission policies match on. */}}
{{- define "cni-repair.serviceAccountUser" -}}
system:serviceaccount:{{ .Release.Namespace }}:{{ include "cni-repair.serviceAccountName" . }}
{{- end -}}

{{/*
The admission policies this install renders, by the suffix of their name (each bound by a binding of the same
name). The controller's startup check (--admission-policies) looks for exactly these; a new policy template adds its
suffix here.
*/}}
{{- define "cni-repair.admissionPolicySuffixes" -}}
{{- $suffixes := list -}}
{{- if .Values.admissionPolicies.meshedPods }}{{ $suffixes = append $suffixes "meshed-pods" }}{{ end -}}
{{- if and .Values.admissionPolicies.ownNode (include "cni-repair.isDaemonSet" .) }}{{ $suffixes = append $suffixes "own-node" }}{{ end -}}
{{- if include "cni-repair.patchesNodes" . }}{{ $suffixes = append $suffixes "startup-taints" }}{{ end -}}
{{- toJson $suffixes -}}
{{- end -}}

{{- define "cni-repair.admissionPolicyNames" -}}
{{- $names := list -}}
{{- range (include "cni-repair.admissionPolicySuffixes" . | fromJsonArray) }}
{{- $names = append $names (printf "%s-%s" (include "cni-repair.fullname" $) .) -}}
{{- end -}}
{{- toJson $names -}}
{{- end -}}

{{/*
One ValidatingAdmissionPolicy and its binding, for this chart's ServiceAccount only (the match condition on the
user name: nobody else's requests are even evaluated). failurePolicy Fail: a policy that cannot be evaluated refuses
the request rather than let it through. Arguments: the context, the name's suffix, and the rest of the policy's
spec (matchConstraints, variables, validations) as YAML.
*/}}
{{- define "cni-repair.admissionPolicy" -}}
{{- $ctx := index . 0 -}}
{{- $suffix := index . 1 -}}
{{- $spec := index . 2 -}}
{{- $name := printf "%s-%s" (include "cni-repair.fullname" $ctx) $suffix -}}
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: {{ $name }}
  labels:
    {{- include "cni-repair.labels" $ctx | nindent 4 }}
spec:
  failurePolicy: Fail
  matchConditions:
    - name: cni-repair-service-account
      expression: {{ printf "request.userInfo.username == %s" (include "cni-repair.celString" (include "cni-repair.serviceAccountUser" $ctx)) | quote }}
  {{- $spec | trim | nindent 2 }}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: {{ $name }}
  labels:
    {{- include "cni-repair.labels" $ctx | nindent 4 }}
spec:
  policyName: {{ $name }}
  validationActions: [Deny]
{{- end -}}

{{/*
The CEL variable tokenNode: the node a per-node instance's token is bound to (the kubelet's projected token names its
pod's node in the user's extra authentication.kubernetes.io/node-name); '' for a token bound to no pod.
*/}}
{{- define "cni-repair.tokenNodeVariable" -}}
- name: tokenNode
  expression: >-
    has(request.userInfo.extra) && 'authentication.kubernetes.io/node-name' in request.userInfo.extra
    ? request.userInfo.extra['authentication.kubernetes.io/node-name'][0] : ''
{{- end -}}

{{/* A CEL string literal, single-quoted. */}}
{{- define "cni-repair.celString" -}}
'{{ . | replace "\\" "\\\\" | replace "'" "\\'" }}'
{{- end -}}

{{/*
CEL: the object carries the label or annotation of a "key" or "key=value" marker. Arguments: the object (oldObject,
namespaceObject), "labels" or "annotations", and the marker.
*/}}
{{- define "cni-repair.markerCel" -}}
{{- $map := printf "%s.metadata.%s" (index . 0) (index . 1) -}}
{{- $parts := splitn "=" 2 (index . 2) -}}
{{- $key := include "cni-repair.celString" $parts._0 -}}
{{- printf "(has(%s) && %s in %s" $map $key $map -}}
{{- if eq (len $parts) 2 }}{{ printf " && %s[%s] == %s" $map $key (include "cni-repair.celString" $parts._1) }}{{ end -}}
)
{{- end -}}

{{/* The startup taint keys the controller manages, as a JSON list: the values' keys, else one per preset (as the
controller defaults them: istio and istio-ambient cni.istio.io/not-ready, linkerd and a custom rule
cni-repair.io/agent-not-ready). */}}
{{- define "cni-repair.startupTaintKeys" -}}
{{- $keys := .Values.startupTaint.keys | default list -}}
{{- if not $keys -}}
{{- range .Values.presets -}}
{{- $keys = append $keys (ternary "cni.istio.io/not-ready" "cni-repair.io/agent-not-ready" (has . (list "istio" "istio-ambient"))) -}}
{{- end -}}
{{- if .Values.customRule.initContainer -}}
{{- $keys = append $keys "cni-repair.io/agent-not-ready" -}}
{{- end -}}
{{- end -}}
{{- $keys | uniq | toJson -}}
{{- end -}}

{{/* Startup taints managed and written (not only reported): nodes patched, under the startup-taints policy. */}}
{{- define "cni-repair.patchesNodes" -}}
{{- if and .Values.startupTaint.mode (ne .Values.mode "dry-run") .Values.admissionPolicies.startupTaints }}true{{ end -}}
{{- end -}}

{{/*
With startupTaint.mode (any mode, any workload), a NoSchedule toleration of each managed key that the given
tolerations do not already cover: the remover of a startup taint must tolerate it, or a cluster whose every node
registered with it never schedules anything. A YAML list; arguments: the context and the tolerations so far.
*/}}
{{- define "cni-repair.startupTaintTolerations" -}}
{{- $ctx := index . 0 -}}
{{- $given := index . 1 -}}
{{- $added := list -}}
{{- if $ctx.Values.startupTaint.mode -}}
{{- range (include "cni-repair.startupTaintKeys" $ctx | fromJsonArray) -}}
{{- $key := . -}}
{{- $covered := false -}}
{{- range $given -}}
{{- /* Only Exists covers the key whatever its value (kubelets, GKE and AKS register it with "" or "true"). */ -}}
{{- $keyMatches := or (not .key) (eq .key $key) -}}
{{- $effectMatches := or (not .effect) (eq .effect "NoSchedule") -}}
{{- if and (eq (.operator | default "") "Exists") $keyMatches $effectMatches -}}{{- $covered = true -}}{{- end -}}
{{- end -}}
{{- if not $covered -}}
{{- $added = append $added (dict "key" $key "operator" "Exists" "effect" "NoSchedule") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toYaml $added -}}
{{- end -}}
