//go:build tools

// Package promtool pins the promtool that test/monitoring/monitoring.mk
// builds (github.com/prometheus/prometheus/cmd/promtool, at the version
// in go.mod): `promtool check rules` and `promtool test rules` run
// deploy/monitoring's rules.
package promtool

import _ "github.com/prometheus/prometheus/cmd/promtool"
