{{- define "campus-mcp.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "campus-mcp.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "campus-mcp.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "campus-mcp.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The secrets, each from the Secret named in values (never in the chart's own objects). */}}
{{- define "campus-mcp.secretEnv" -}}
- name: CAMPUS_MCP_SECRET_KEY
  valueFrom: {secretKeyRef: {name: {{ .Values.secret.name }}, key: {{ .Values.secret.keys.secretKey }}}}
- name: CAMPUS_MCP_DATABASE_URL
  valueFrom: {secretKeyRef: {name: {{ .Values.secret.name }}, key: {{ .Values.secret.keys.databaseUrl }}}}
- name: CAMPUS_MCP_REDIS_URL
  valueFrom: {secretKeyRef: {name: {{ .Values.secret.name }}, key: {{ .Values.secret.keys.redisUrl }}}}
{{- if .Values.secret.keys.metricsToken }}
- name: CAMPUS_MCP_METRICS_TOKEN
  valueFrom: {secretKeyRef: {name: {{ .Values.secret.name }}, key: {{ .Values.secret.keys.metricsToken }}}}
{{- end }}
{{- end -}}

{{- define "campus-mcp.volumes" -}}
# The only folders written (the root file system is read-only): the server's own files, /tmp.
- name: var
  emptyDir: {}
- name: tmp
  emptyDir: {medium: Memory, sizeLimit: 64Mi}
{{- end -}}

{{- define "campus-mcp.volumeMounts" -}}
- {name: var, mountPath: /var/lib/campus-mcp}
- {name: tmp, mountPath: /tmp}
{{- end -}}
