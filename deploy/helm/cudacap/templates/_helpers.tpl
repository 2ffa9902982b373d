{{/* The objects' name: cudacap-node unless nameOverride (63: a label value's limit). */}}
{{- define "cudacap.name" -}}
{{- default (printf "%s-node" .Chart.Name) .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The namespace everything goes in. */}}
{{- define "cudacap.namespace" -}}
{{- default .Release.Namespace .Values.namespace.name -}}
{{- end -}}

{{/* The node image: the tag defaults to the chart's appVersion. */}}
{{- define "cudacap.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* Container lines shared by the three containers: image and pull policy. */}}
{{- define "cudacap.imageLines" -}}
image: {{ include "cudacap.image" . }}
{{- with .Values.image.pullPolicy }}
imagePullPolicy: {{ . }}
{{- end }}
{{- end -}}

{{/* The node settings the installer and the sidecar read from the ConfigMap. */}}
{{- define "cudacap.nodeEnv" -}}
- name: HOST_ROOT
  value: /host
- name: HAMI_DIR
  valueFrom: {configMapKeyRef: {name: {{ include "cudacap.name" . }}, key: HAMI_DIR}}
- name: HAMI_VERSION
  valueFrom: {configMapKeyRef: {name: {{ include "cudacap.name" . }}, key: HAMI_VERSION}}
{{- end -}}

{{/* The installer's and the sidecar's mounts: cudacap's host folder, HAMi's. */}}
{{- define "cudacap.installMounts" -}}
- name: host-lib
  mountPath: /host/usr/local/lib/cudacap
{{- if .Values.hami.dir }}
- name: hami
  mountPath: /host{{ .Values.hami.dir }}
{{- end }}
{{- end -}}
