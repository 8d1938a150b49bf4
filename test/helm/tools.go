//go:build tools

// Package tools pins the Helm CLI that the chart tests run
// (test/helm/helm.mk builds helm.sh/helm/v4/cmd/helm at the version in
// go.mod into build/helm/bin/helm).
package tools

import _ "helm.sh/helm/v4/cmd/helm"
