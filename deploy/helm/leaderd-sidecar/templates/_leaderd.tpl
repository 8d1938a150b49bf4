{{/*
leaderd-sidecar: named templates an app chart includes to run leaderd
beside its app.  Every template takes the app chart's root context (.)
and reads the values under "leaderd-sidecar" (defaults: this chart's
values.yaml).  docs/helm.md shows a whole app chart; deploy/helm/
example-app is one.

  leaderd-sidecar.initContainers   the native sidecar (native: true), a list item
  leaderd-sidecar.containers       the plain sidecar (native: false), a list item
  leaderd-sidecar.volumes          config, socket and projected token volumes
  leaderd-sidecar.appEnv           LEADERD_URL for the app's containers
  leaderd-sidecar.appVolumeMounts  the socket directory for the app's containers
  leaderd-sidecar.podAnnotations   the config's checksum (rolls the pods)
  leaderd-sidecar.resources        ConfigMap, Role, RoleBinding, PodMonitor
*/}}

{{- define "leaderd-sidecar.name" -}}
{{- printf "%s-leaderd" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "leaderd-sidecar.lockName" -}}
{{- $v := index .Values "leaderd-sidecar" -}}
{{- $v.lock.name | default .Release.Name -}}
{{- end -}}

{{- define "leaderd-sidecar.serviceAccountName" -}}
{{- $v := index .Values "leaderd-sidecar" -}}
{{- $v.serviceAccountName | default .Release.Name -}}
{{- end -}}

{{/* leaderd.yaml, as deploy/base/leaderd.yaml; POD_NAME and
POD_NAMESPACE come from the downward API. */}}
{{- define "leaderd-sidecar.config" -}}
{{- $v := index .Values "leaderd-sidecar" -}}
identity: ${POD_NAME}
lock:
  type: {{ $v.lock.type }}
  namespace: {{ $v.lock.namespace | default "${POD_NAMESPACE}" | quote }}
{{- if not $v.shards.group }}
  name: {{ include "leaderd-sidecar.lockName" . | quote }}
{{- else }}
shards:
  group: {{ $v.shards.group | quote }}
  count: {{ $v.shards.count }}
{{- end }}
lease_duration: {{ $v.leaseDuration }}
renew_deadline: {{ $v.renewDeadline }}
retry_period: {{ $v.retryPeriod }}
release_on_cancel: {{ $v.releaseOnCancel }}
{{- if $v.appProbe }}
candidacy:
  probe:
    url: {{ $v.appProbe | quote }}
{{- end }}
listen:
  http: "localhost:{{ $v.ports.http }}"
{{- if $v.unixSocket }}
  unix: /var/run/leaderd/leaderd.sock
{{- end }}
  probes: "0.0.0.0:{{ $v.ports.probes }}"
kubernetes:
  kubeconfig: ""
  request_timeout: {{ $v.requestTimeout }}
log:
  level: {{ $v.log.level }}
  format: {{ $v.log.format }}
readyz:
  leader_only: false
{{- end -}}

{{- define "leaderd-sidecar.podAnnotations" -}}
checksum/leaderd-config: {{ include "leaderd-sidecar.config" . | sha256sum }}
{{- end -}}

{{/* The container, without the list's dash. */}}
{{- define "leaderd-sidecar.container" -}}
{{- $v := index .Values "leaderd-sidecar" -}}
name: leaderd
image: "{{ $v.image.repository }}:{{ $v.image.tag }}"
imagePullPolicy: {{ $v.image.pullPolicy }}
args: ["--config", "/etc/leaderd/leaderd.yaml"]
env:
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
ports:
- name: leaderd-probes
  containerPort: {{ $v.ports.probes }}
  protocol: TCP
{{- if $v.native }}
restartPolicy: Always
# The app starts once leaderd answers.
startupProbe:
  httpGet:
    path: /healthz
    port: leaderd-probes
  periodSeconds: 1
  timeoutSeconds: 2
  failureThreshold: 30
{{- end }}
livenessProbe:
  httpGet:
    path: /healthz
    port: leaderd-probes
  periodSeconds: 10
  timeoutSeconds: 2
  failureThreshold: 3
readinessProbe:
  httpGet:
    path: /readyz
    port: leaderd-probes
  periodSeconds: 5
  timeoutSeconds: 2
  failureThreshold: 2
resources:
  {{- toYaml $v.resources | nindent 2 }}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  readOnlyRootFilesystem: true
  allowPrivilegeEscalation: false
  capabilities:
    drop: ["ALL"]
  seccompProfile:
    type: RuntimeDefault
volumeMounts:
- name: leaderd-config
  mountPath: /etc/leaderd
  readOnly: true
{{- if $v.unixSocket }}
- name: leaderd-socket
  mountPath: /var/run/leaderd
{{- end }}
- name: leaderd-kube-api-access
  mountPath: /var/run/secrets/kubernetes.io/serviceaccount
  readOnly: true
{{- end -}}

{{- define "leaderd-sidecar.initContainers" -}}
{{- if (index .Values "leaderd-sidecar").native -}}
- {{ include "leaderd-sidecar.container" . | indent 2 | trim }}
{{- end -}}
{{- end -}}

{{- define "leaderd-sidecar.containers" -}}
{{- if not (index .Values "leaderd-sidecar").native -}}
- {{ include "leaderd-sidecar.container" . | indent 2 | trim }}
{{- end -}}
{{- end -}}

{{- define "leaderd-sidecar.volumes" -}}
{{- $v := index .Values "leaderd-sidecar" -}}
- name: leaderd-config
  configMap:
    name: {{ include "leaderd-sidecar.name" . }}
{{- if $v.unixSocket }}
- name: leaderd-socket
  emptyDir:
    medium: Memory
    sizeLimit: 1Mi
{{- end }}
# What the kubelet would mount by default, for leaderd alone (the pod
# should set automountServiceAccountToken: false).
- name: leaderd-kube-api-access
  projected:
    defaultMode: 0444
    sources:
    - serviceAccountToken:
        path: token
        expirationSeconds: 3607
    - configMap:
        name: kube-root-ca.crt
        items:
        - key: ca.crt
          path: ca.crt
    - downwardAPI:
        items:
        - path: namespace
          fieldRef:
            fieldPath: metadata.namespace
{{- end -}}

{{- define "leaderd-sidecar.appEnv" -}}
{{- $v := index .Values "leaderd-sidecar" -}}
- name: LEADERD_URL
  value: "http://127.0.0.1:{{ $v.ports.http }}"
{{- if $v.unixSocket }}
- name: LEADERD_SOCKET
  value: /var/run/leaderd/leaderd.sock
{{- end }}
{{- end -}}

{{- define "leaderd-sidecar.appVolumeMounts" -}}
{{- if (index .Values "leaderd-sidecar").unixSocket -}}
- name: leaderd-socket
  mountPath: /var/run/leaderd
{{- end -}}
{{- end -}}

{{/* The Lease rules of deploy/base/role.yaml, for each lock type.  A
shard group's Leases are many and named at run time: no resourceNames.
The split-lock check's read: on leases, the Endpoints and the ConfigMap
of the lock's name; on endpoints or configmaps, the Lease; none on a
MultiLock, which runs no such check, nor for a shard group. */}}
{{- define "leaderd-sidecar.rules" -}}
{{- $v := index .Values "leaderd-sidecar" -}}
{{- $name := include "leaderd-sidecar.lockName" . -}}
{{- if $v.shards.group }}
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
{{- else }}
{{- $objs := dict "leases" (list "coordination.k8s.io" "leases") "endpoints" (list "" "endpoints") "configmaps" (list "" "configmaps") -}}
{{- $kinds := dict "leases" (list "leases") "endpoints" (list "endpoints") "configmaps" (list "configmaps") "endpointsleases" (list "endpoints" "leases") "configmapsleases" (list "configmaps" "leases") -}}
{{- range $k := index $kinds $v.lock.type }}
{{- $o := index $objs $k }}
- apiGroups: [{{ index $o 0 | quote }}]
  resources: [{{ index $o 1 | quote }}]
  resourceNames: [{{ $name | quote }}]
  verbs: ["get", "watch", "update"]
# create cannot be limited by name: the object does not exist yet.
- apiGroups: [{{ index $o 0 | quote }}]
  resources: [{{ index $o 1 | quote }}]
  verbs: ["create"]
{{- end }}
{{- end }}
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create"]
{{- if not $v.shards.group }}
{{- if eq $v.lock.type "leases" }}
# The split-lock check: reads the Endpoints and the ConfigMap of the
# Lease's name, to find an old-style elector electing apart from it.
- apiGroups: [""]
  resources: ["endpoints", "configmaps"]
  resourceNames: [{{ $name | quote }}]
  verbs: ["get"]
{{- else if or (eq $v.lock.type "endpoints") (eq $v.lock.type "configmaps") }}
# The split-lock check: reads the Lease of the lock's name, to find a
# Lease elector electing apart from this {{ $v.lock.type }} lock.
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  resourceNames: [{{ $name | quote }}]
  verbs: ["get"]
{{- end }}
{{- end }}
{{- end -}}

{{- define "leaderd-sidecar.rbac" -}}
{{- $v := index .Values "leaderd-sidecar" -}}
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ include "leaderd-sidecar.name" . }}
{{- with $v.lock.namespace }}
  namespace: {{ . }}
{{- end }}
  labels:
    app.kubernetes.io/component: leaderd
    app.kubernetes.io/instance: {{ .Release.Name }}
rules:
{{- include "leaderd-sidecar.rules" . }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ include "leaderd-sidecar.name" . }}
{{- with $v.lock.namespace }}
  namespace: {{ . }}
{{- end }}
  labels:
    app.kubernetes.io/component: leaderd
    app.kubernetes.io/instance: {{ .Release.Name }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "leaderd-sidecar.name" . }}
subjects:
- kind: ServiceAccount
  name: {{ include "leaderd-sidecar.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
{{- end -}}

{{- define "leaderd-sidecar.configMap" -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "leaderd-sidecar.name" . }}
  labels:
    app.kubernetes.io/component: leaderd
    app.kubernetes.io/instance: {{ .Release.Name }}
data:
  leaderd.yaml: |
    {{- include "leaderd-sidecar.config" . | nindent 4 }}
{{- end -}}

{{/* selector: the app's pod labels, a dict. */}}
{{- define "leaderd-sidecar.podMonitor" -}}
{{- $v := index .Values "leaderd-sidecar" -}}
apiVersion: monitoring.coreos.com/v1
kind: PodMonitor
metadata:
  name: {{ include "leaderd-sidecar.name" . }}
  labels:
    app.kubernetes.io/component: leaderd
    app.kubernetes.io/instance: {{ .Release.Name }}
    {{- with $v.podMonitor.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      app.kubernetes.io/instance: {{ .Release.Name }}
  # The label deploy/monitoring's alerts group by (docs/operations.md).
  podTargetLabels:
  - app.kubernetes.io/name
  podMetricsEndpoints:
  - port: leaderd-probes
    path: /metrics
    interval: {{ $v.podMonitor.interval }}
{{- end -}}

{{- define "leaderd-sidecar.resources" -}}
{{- $v := index .Values "leaderd-sidecar" -}}
{{ include "leaderd-sidecar.configMap" . }}
---
{{ include "leaderd-sidecar.rbac" . }}
{{- if $v.podMonitor.enabled }}
---
{{ include "leaderd-sidecar.podMonitor" . }}
{{- end }}
{{- end -}}
