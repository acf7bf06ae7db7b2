{{- define "glimpse.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "glimpse.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "glimpse.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "glimpse.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-secrets" (include "glimpse.fullname" .)) -}}
{{- end -}}

{{/* Environment shared by every Glimpse container: the ConfigMap and the Secret. */}}
{{- define "glimpse.envFrom" -}}
- configMapRef:
    name: {{ include "glimpse.fullname" . }}-config
- secretRef:
    name: {{ include "glimpse.secretName" . }}
{{- end -}}
