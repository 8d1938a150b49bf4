# test/monitoring/monitoring.mk -- leaderd's alerts, dashboard and runbook
# (deploy/monitoring/, docs/runbook.md), tested with promtool.  Included
# by the top Makefile (`-include test/monitoring/monitoring.mk`).
#
#   make monitoring-test   build promtool (from the Go module proxy,
#                          into build/monitoring), then run
#                          test/monitoring/check_rules.py: promtool check
#                          rules on the rules file and the PrometheusRule,
#                          promtool test rules on rules-test.yaml with
#                          each alert firing and quiet, each shown to
#                          fail when its expression never or always fires,
#                          the runbook's anchors and the dashboard's
#                          shape
#   make promtool          only build promtool
#
# The metric names the rules and the dashboard read are checked against a
# live leaderd by the integration suite (test_metrics.py).
#
# promtool is github.com/prometheus/prometheus/cmd/promtool at the version
# pinned in test/monitoring/promtool/go.mod.  As the e2e harness (e2e.mk):
# niced, -p 2, the top Makefile's GO_TOOLS_CACHE as its build cache
# (MON_GOCACHE= to move it), modules in the default GOMODCACHE.  Its first build takes about 4.5 minutes on this
# 2-core machine, so make test starts it in the background with the e2e
# harness (e2e-prebuild depends on monitoring-prebuild below) and
# monitoring-test waits for it.

MON_BUILD	?= $(CURDIR)/build/monitoring
MON_BIN		 = $(MON_BUILD)/bin
MON_GOCACHE	?= $(GO_TOOLS_CACHE)
GO		?= go
MON_GOENV	 = GOCACHE=$(MON_GOCACHE) GOFLAGS=-mod=mod GOMAXPROCS=2
PROMTOOL	 = $(MON_BIN)/promtool
PROMTOOL_VERSION := $(shell sed -n 's/^require github.com\/prometheus\/prometheus \(v[0-9.]*\)$$/\1/p' test/monitoring/promtool/go.mod)
MON_SRCS	 = test/monitoring/promtool/go.mod test/monitoring/promtool/go.sum \
		   test/monitoring/promtool/tools.go test/monitoring/monitoring.mk
MON_PREBUILD_WAIT ?= 1200

.PHONY: promtool monitoring-test monitoring-prebuild monitoring-prebuilt

promtool: $(PROMTOOL)

$(PROMTOOL): $(MON_SRCS)
	$(if $(shell command -v $(GO) 2>/dev/null),,$(error make promtool: the Go toolchain ($(GO)) is not installed: Go 1.26 or newer is needed to build promtool))
	@mkdir -p $(@D)
	@echo "monitoring: building promtool (prometheus module $(PROMTOOL_VERSION)); the first build takes minutes"
	@t0=$$(date +%s); \
	cd test/monitoring/promtool && $(MON_GOENV) nice -n 10 $(GO) build -p 2 \
		-o $@.tmp github.com/prometheus/prometheus/cmd/promtool && \
	mv $@.tmp $@ && \
	t=$$(( $$(date +%s) - t0 )); echo "monitoring: built promtool in $${t}s"; \
	test -f $(MON_BUILD)/promtool.build-time || echo "$$t" > $(MON_BUILD)/promtool.build-time

# In the background, at nice 19, while make test's C suites run
# (test/prebuild.sh); monitoring-test waits for it.
monitoring-prebuild:
	@sh test/prebuild.sh start $(MON_BUILD) promtool "$(MAKE)" promtool

e2e-prebuild: monitoring-prebuild

monitoring-prebuilt:
	@sh test/prebuild.sh wait $(MON_BUILD) promtool $(MON_PREBUILD_WAIT)

monitoring-test: monitoring-prebuilt
	@$(MAKE) --no-print-directory -s $(PROMTOOL)
	@test -f $(MON_BUILD)/promtool.build-time && \
		echo "monitoring: promtool's first build took $$(cat $(MON_BUILD)/promtool.build-time)s (cached in $(MON_BIN))" || true
	$(PYTHON) test/monitoring/check_rules.py --promtool $(PROMTOOL)
