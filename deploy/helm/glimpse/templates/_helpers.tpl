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

{{/*
The longest job a worker runs, s: a run at its largest budget (300 s, CONTRACT.md "Browser session runs")
plus one CAPTURE_TIMEOUT_MS and the 60 s it may take to store its video, or a capture at its largest
budget (5 x CAPTURE_TIMEOUT_MS + the 10 s longest delay, docs/capture-engine.md "Time budget"),
whichever is longer. The KEDA scale-down waits longer than this.
*/}}
{{- define "glimpse.longestJobSeconds" -}}
{{- $t := div (int (.Values.config.CAPTURE_TIMEOUT_MS | default "30000")) 1000 -}}
{{- max (add (mul 6 $t) 80) (add 300 $t 60) -}}
{{- end -}}

{{/* Volumes a read-only root file system needs (containerSecurityContext): /tmp and the home directory. */}}
{{- define "glimpse.writableMounts" -}}
- name: tmp
  mountPath: /tmp
- name: home
  mountPath: /home/node
{{- end -}}

{{- define "glimpse.writableVolumes" -}}
- name: tmp
  emptyDir: {}
- name: home
  emptyDir: {}
{{- end -}}
