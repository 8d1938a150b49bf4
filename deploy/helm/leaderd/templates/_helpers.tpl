{{- define "leaderd.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "leaderd.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* A CEL map literal of quantities, e.g. {'cpu': '5m'}. */}}
{{- define "leaderd.celQuantities" -}}
{
{{- $first := true -}}
{{- range $k, $v := . -}}
{{- if not $first }}, {{ end -}}
'{{ $k }}': '{{ $v }}'
{{- $first = false -}}
{{- end -}}
}
{{- end -}}

{{/*
The injected container as a CEL object of type T (Object.spec.
initContainers or Object.spec.containers), as the apiserver types it;
the JSONPatch mutations add it.  args come from the policy's variables.
What deploy/base's container has, but no config file: leaderd's flags
carry it, and the projected token volume is the policy's own.
*/}}
{{- define "leaderd.celContainer" -}}
{{- $T := .T -}}
{{- $i := .root.Values.injection -}}
{{- $img := .root.Values.image -}}
{{ $T }}{
  name: 'leaderd',
  image: '{{ $img.repository }}:{{ $img.tag }}',
  imagePullPolicy: '{{ $img.pullPolicy }}',
  args: variables.args,
  env: [
    {{ $T }}.env{name: 'POD_NAME', valueFrom: {{ $T }}.env.valueFrom{
      fieldRef: {{ $T }}.env.valueFrom.fieldRef{fieldPath: 'metadata.name'}}},
    {{ $T }}.env{name: 'POD_NAMESPACE', valueFrom: {{ $T }}.env.valueFrom{
      fieldRef: {{ $T }}.env.valueFrom.fieldRef{fieldPath: 'metadata.namespace'}}}],
  ports: [{{ $T }}.ports{name: 'leaderd-probes', containerPort: 4041, protocol: 'TCP'}],
  {{- if .native }}
  restartPolicy: 'Always',
  startupProbe: {{ $T }}.startupProbe{
    httpGet: {{ $T }}.startupProbe.httpGet{path: '/healthz', port: 4041},
    periodSeconds: 1, timeoutSeconds: 2, failureThreshold: 30},
  {{- end }}
  livenessProbe: {{ $T }}.livenessProbe{
    httpGet: {{ $T }}.livenessProbe.httpGet{path: '/healthz', port: 4041},
    periodSeconds: 10, timeoutSeconds: 2, failureThreshold: 3},
  readinessProbe: {{ $T }}.readinessProbe{
    httpGet: {{ $T }}.readinessProbe.httpGet{path: '/readyz', port: 4041},
    periodSeconds: 5, timeoutSeconds: 2, failureThreshold: 2},
  resources: {{ $T }}.resources{
    requests: {{ include "leaderd.celQuantities" $i.resources.requests }},
    limits: {{ include "leaderd.celQuantities" $i.resources.limits }}},
  securityContext: {{ $T }}.securityContext{
    runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532,
    readOnlyRootFilesystem: true, allowPrivilegeEscalation: false,
    capabilities: {{ $T }}.securityContext.capabilities{drop: ['ALL']},
    seccompProfile: {{ $T }}.securityContext.seccompProfile{type: 'RuntimeDefault'}},
  volumeMounts: [{{ $T }}.volumeMounts{name: 'leaderd-kube-api-access',
    mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true}]
}
{{- end -}}

{{/* The projected token volume: what the kubelet mounts by default, for
leaderd alone (deploy/base/deployment.yaml's kube-api-access). */}}
{{- define "leaderd.celVolume" -}}
{{- $S := "Object.spec.volumes.projected.sources" -}}
Object.spec.volumes{name: 'leaderd-kube-api-access',
  projected: Object.spec.volumes.projected{defaultMode: 292, sources: [
    {{ $S }}{serviceAccountToken: {{ $S }}.serviceAccountToken{
      path: 'token', expirationSeconds: 3607}},
    {{ $S }}{configMap: {{ $S }}.configMap{name: 'kube-root-ca.crt',
      items: [{{ $S }}.configMap.items{key: 'ca.crt', path: 'ca.crt'}]}},
    {{ $S }}{downwardAPI: {{ $S }}.downwardAPI{items: [
      {{ $S }}.downwardAPI.items{path: 'namespace',
        fieldRef: {{ $S }}.downwardAPI.items.fieldRef{fieldPath: 'metadata.namespace'}}]}}]}}
{{- end -}}

{{/* The ServiceAccount groups and users the RBAC and FlowSchema name. */}}
{{- define "leaderd.subjects" -}}
{{- range .Values.rbac.namespaces }}
- kind: Group
  apiGroup: rbac.authorization.k8s.io
  name: system:serviceaccounts:{{ . }}
{{- end }}
{{- range .Values.rbac.serviceAccounts }}
- kind: ServiceAccount
  name: {{ .name }}
  namespace: {{ .namespace }}
{{- end }}
{{- end -}}
