{{/* Chart name, overridable. */}}
{{- define "fairplay.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* <release>-<chart>, or the release name when it already holds the chart name. */}}
{{- define "fairplay.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The operator's resource names. */}}
{{- define "fairplay.operator.fullname" -}}
{{- printf "%s-operator" (include "fairplay.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "fairplay.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object of the chart. */}}
{{- define "fairplay.labels" -}}
helm.sh/chart: {{ include "fairplay.chart" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: fairplay
{{- end }}

{{/* Selector labels of the operator pods. */}}
{{- define "fairplay.operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "fairplay.name" . }}-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{- define "fairplay.operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "fairplay.operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The image: repository:tag, the tag defaulting to the appVersion. */}}
{{- define "fairplay.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* A NetworkPolicy peer from {namespaceSelector, podSelector} (both must match), as a one-item list. */}}
{{- define "fairplay.networkPolicy.peer" -}}
{{- $p := dict }}
{{- with .namespaceSelector }}{{ $_ := set $p "namespaceSelector" . }}{{ end }}
{{- with .podSelector }}{{ $_ := set $p "podSelector" . }}{{ end }}
{{- if not $p }}{{ fail "a networkPolicy peer needs a namespaceSelector or a podSelector" }}{{ end }}
{{- list $p | toYaml }}
{{- end }}

{{/* A NetworkPolicy egress rule from {ports, to} (TCP; no to = any destination), as a one-item list. */}}
{{- define "fairplay.networkPolicy.egress" -}}
{{- $ports := list }}
{{- range .ports }}{{ $ports = append $ports (dict "port" (int .) "protocol" "TCP") }}{{ end }}
{{- $r := dict "ports" $ports }}
{{- with .to }}{{ $_ := set $r "to" . }}{{ end }}
{{- list $r | toYaml }}
{{- end }}
