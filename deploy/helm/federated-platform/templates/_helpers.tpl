{{/* The name every resource of this release starts with. */}}
{{- define "platform.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The Secret holding DATABASE_URL, INTERNAL_SECRET and REDIS_URL. */}}
{{- define "platform.secretName" -}}
{{- if .Values.secret.existingSecret -}}
{{- .Values.secret.existingSecret -}}
{{- else -}}
{{- printf "%s-secrets" (include "platform.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "platform.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{/* What every service reads: its secrets, the log level, where the subgraphs and the edge are. */}}
{{- define "platform.env" -}}
- name: NODE_ENV
  value: production
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef: { name: {{ include "platform.secretName" . }}, key: DATABASE_URL }
- name: INTERNAL_SECRET
  valueFrom:
    secretKeyRef: { name: {{ include "platform.secretName" . }}, key: INTERNAL_SECRET }
- name: REDIS_URL
  valueFrom:
    secretKeyRef: { name: {{ include "platform.secretName" . }}, key: REDIS_URL, optional: true }
- name: SUBGRAPH_HOST
  value: 0.0.0.0
- name: EDGE_INTERNAL_URL
  value: {{ printf "http://%s-edge:%v" (include "platform.fullname" .) .Values.edge.service.port | quote }}
{{- $root := . }}
{{- range $name, $svc := .Values.subgraphs }}
- name: {{ upper $name }}_URL
  value: {{ printf "http://%s-%s:%v/graphql" (include "platform.fullname" $root) $name $svc.port | quote }}
{{- end }}
{{- end -}}
