{{/* The objects' name: the release's when it says gpumeter, else release-gpumeter. */}}
{{- define "gpumeter.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains "gpumeter" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-gpumeter" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Selects the agent's pods: the name the rules' job comes from, and the release. */}}
{{- define "gpumeter.selectorLabels" -}}
app.kubernetes.io/name: gpumeter
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "gpumeter.labels" -}}
{{ include "gpumeter.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* repository@digest, else repository:tag (the chart's appVersion by default). */}}
{{- define "gpumeter.image" -}}
{{- $repo := required "image.repository: set it to where `make image-push REGISTRY=…` pushed the image (docs/install.md)" .Values.image.repository -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" $repo .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repo (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/* The device plugin config's ConfigMap, or "" when the mode reads none. */}}
{{- define "gpumeter.devicePluginConfigMap" -}}
{{- if ne .Values.sharing.mode "auto" -}}
{{- .Values.sharing.existingConfigMap | default (printf "%s-device-plugin" (include "gpumeter.fullname" .)) -}}
{{- end -}}
{{- end -}}
