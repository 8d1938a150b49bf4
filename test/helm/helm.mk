# test/helm/helm.mk -- the Helm charts under deploy/helm/ and their tests.
# Included by the top Makefile (`-include test/helm/helm.mk`).
#
#   make helm-bin       build the Helm CLI (helm.sh/helm/v4/cmd/helm, the
#                       version pinned in test/helm/go.mod) from the Go
#                       module proxy into build/helm/bin/helm
#   make helm-test      helm lint --strict on both charts, the golden
#                       renders (test/helm/golden/), the schema's refusals,
#                       leaderd -n on the rendered configs
#                       (test/helm/test_charts.py); a make test stage
#   make helm-golden    render the golden files again after a chart change
#                       (then read the diff before committing it)
#
# The injection policy and the rendered charts on a real kube-apiserver
# are in test/e2e/test_inject.py (make e2e, which builds helm first).
#
# Like test/e2e/e2e.mk: niced, -p 2, the top Makefile's GO_TOOLS_CACHE
# as its build cache (HELM_GOCACHE= to move it), modules from the Go
# module proxy into the shared GOMODCACHE.  make test builds it in the
# background (helm-prebuild) while the C suites run; helm-test waits.

HELM_BUILD	?= $(CURDIR)/build/helm
HELM		 = $(HELM_BUILD)/bin/helm
HELM_GOCACHE	?= $(GO_TOOLS_CACHE)
HELM_VERSION	:= $(shell sed -n 's/^\(require\)\{0,1\}[[:space:]]*helm.sh\/helm\/v4 \(v[0-9.]*\).*$$/\2/p' test/helm/go.mod)
GO		?= go
HELM_GOENV	 = GOCACHE=$(HELM_GOCACHE) GOFLAGS=-mod=mod GOMAXPROCS=2
HELM_SRCS	 = test/helm/go.mod test/helm/go.sum test/helm/helm.mk
HELM_PREBUILD_WAIT ?= 1800
HELM_PYTEST	?= $(PYTHON) -m pytest -q -p no:cacheprovider -rfEs

.PHONY: helm-bin helm-go-check helm-prebuild helm-prebuilt helm-test helm-golden

helm-go-check:
	$(if $(shell command -v $(GO) 2>/dev/null),,$(error make helm-bin: the Go toolchain ($(GO)) is not installed: Go 1.26 or newer builds the Helm CLI))
	@:

# Built once; again only when go.mod, go.sum or this file change.  The
# first build's time is kept in build/helm/helm.build-time.
$(HELM): $(HELM_SRCS) | helm-go-check
	@mkdir -p $(@D)
	@echo "helm: building helm $(HELM_VERSION) from the Go module proxy"
	@t0=$$(date +%s); \
	cd test/helm && $(HELM_GOENV) nice -n 10 $(GO) build -p 2 \
		-ldflags '-X helm.sh/helm/v4/internal/version.version=$(HELM_VERSION) -X helm.sh/helm/v4/internal/version.gitTreeState=clean' \
		-o $@.tmp helm.sh/helm/v4/cmd/helm && mv $@.tmp $@ && \
	t=$$(( $$(date +%s) - t0 )); echo "helm: built in $${t}s"; \
	test -f $(HELM_BUILD)/helm.build-time || echo "$$t" > $(HELM_BUILD)/helm.build-time

helm-bin: $(HELM)
	@test -f $(HELM_BUILD)/helm.build-time && \
		echo "helm: first build took $$(cat $(HELM_BUILD)/helm.build-time)s (now cached in $(HELM))"; true

# In the background at nice 19, as e2e-prebuild does; helm-prebuilt
# waits for it (helm-test and e2e need the binary).
helm-prebuild:
	@sh test/prebuild.sh start $(HELM_BUILD) "the Helm CLI" "$(MAKE)" helm-bin

helm-prebuilt:
	@sh test/prebuild.sh wait $(HELM_BUILD) "the Helm CLI" $(HELM_PREBUILD_WAIT)

# The wait, then the binary, one after the other (under make -j, as
# prerequisites, a foreground build would race the background one).
helm-test: $(LEADERD_TARGET)
	@$(MAKE) --no-print-directory helm-prebuilt
	@$(MAKE) --no-print-directory $(HELM)
	cd test/helm && HELM=$(HELM) LEADERD=$(LEADERD_BIN) REPO=$(CURDIR) \
		$(HELM_PYTEST) test_charts.py

helm-golden: $(HELM)
	cd test/helm && HELM=$(HELM) REPO=$(CURDIR) $(PYTHON) test_charts.py --regenerate

# make e2e runs test/e2e/test_inject.py, which renders the charts.
e2e e2e-cluster: $(HELM)
E2E_ENV += HELM=$(HELM)
