# test/e2e/e2e.mk -- end-to-end tests against a real kube-apiserver.
# Included by the top Makefile (`-include test/e2e/e2e.mk`).
#
#   make e2e            build the harness (kube-apiserver + embedded etcd,
#                       kubectl and the client-go elector, from the Go
#                       module proxy; cached in build/e2e), then run
#                       pytest test/e2e against it
#   make e2e-ha         the HA harness: three etcd members and two
#                       kube-apiservers (kasbox's roles), eight faults of
#                       the control plane, one table row each
#                       (test/e2e/ha.py); E2E_HA_ONLY=1,3 picks scenarios
#   make e2e-ha-smoke   its scenario 1 only (make test runs it)
#   KUBECONFIG=... [E2E_NAMESPACE=ns] make e2e-cluster
#                       the same tests against an existing cluster, without
#                       the harness (users are ServiceAccounts there)
#
# Go builds are niced and run with -p 2 (the machine has 2 cores).  The
# build cache is the top Makefile's GO_TOOLS_CACHE, Go's own by default
# (E2E_GOCACHE= to move it); modules come from the Go module proxy into
# the default GOMODCACHE (~/go/pkg/mod).  Both are shared by every clone
# on the machine.

E2E_BUILD	?= $(CURDIR)/build/e2e
E2E_BIN		 = $(E2E_BUILD)/bin
E2E_GOCACHE	?= $(GO_TOOLS_CACHE)
GO		?= go
E2E_GOENV	 = GOCACHE=$(E2E_GOCACHE) GOFLAGS=-mod=mod GOMAXPROCS=2
# The Kubernetes release pinned in test/e2e/apiserver/go.mod; stamped into
# the binaries as k8s's own build does (otherwise they say v0.0.0-master).
E2E_KUBE_VERSION := $(shell sed -n 's/^[[:space:]]*k8s.io\/kubernetes \(v[0-9.]*\)$$/\1/p' test/e2e/apiserver/go.mod)
E2E_KUBE_MINOR	 := $(word 2,$(subst ., ,$(E2E_KUBE_VERSION)))
E2E_LDFLAGS	 = $(foreach p,k8s.io/component-base/version k8s.io/client-go/pkg/version,\
		   -X $(p).gitVersion=$(E2E_KUBE_VERSION) -X $(p).gitMajor=1 \
		   -X $(p).gitMinor=$(E2E_KUBE_MINOR) -X $(p).gitTreeState=clean)
E2E_GOBUILD	 = $(E2E_GOENV) nice -n 10 $(GO) build -p 2 -ldflags '$(E2E_LDFLAGS)'
E2E_PYTEST	?= $(PYTHON) -m pytest -q -p no:cacheprovider -rfEs

E2E_KAS_SRCS	 = $(wildcard test/e2e/apiserver/*.go) test/e2e/apiserver/go.mod test/e2e/apiserver/go.sum test/e2e/e2e.mk
E2E_ELECT_SRCS	 = $(wildcard test/e2e/clientgo-elector/*.go) test/e2e/clientgo-elector/go.mod test/e2e/clientgo-elector/go.sum test/e2e/e2e.mk
E2E_V023_SRCS	 = $(wildcard test/e2e/clientgo-elector-v023/*.go) test/e2e/clientgo-elector-v023/go.mod test/e2e/clientgo-elector-v023/go.sum test/e2e/e2e.mk

.PHONY: e2e e2e-ha e2e-ha-smoke e2e-cluster e2e-bins e2e-go-check e2e-prebuild e2e-prebuilt

# One clear line when the toolchain or the module proxy is missing (make's
# own "*** ... Stop." line, nothing else).  The recipe's lines are expanded
# in order, so the $(eval) runs before the $(if) below it.
E2E_NOGO_MSG	 = the Go toolchain ($(GO)) is not installed: Go 1.26 or newer is needed to build the kube-apiserver harness
E2E_NOPROXY_MSG	 = cannot fetch the harness's Go modules from the Go module proxy ($(shell $(GO) env GOPROXY 2>/dev/null)): $(E2E_DL_ERR)
e2e-go-check:
	$(if $(shell command -v $(GO) 2>/dev/null),,$(error make e2e: $(E2E_NOGO_MSG)))
	$(eval E2E_DL_ERR := $(shell for m in apiserver clientgo-elector clientgo-elector-v023; do \
		out=$$(cd test/e2e/$$m && $(E2E_GOENV) $(GO) mod download 2>&1) || \
		{ echo "$$out" | grep -v '^go: downloading' | head -n 1; break; }; done))
	$(if $(E2E_DL_ERR),$(error make e2e: $(E2E_NOPROXY_MSG)))
	@:

# Built once; make rebuilds only when the sources, go.mod/go.sum or this
# file change.  Each build prints its time; the first one in this build
# directory is kept in build/e2e/*.build-time and printed on every run.
$(E2E_BIN)/kasbox: $(E2E_KAS_SRCS) | e2e-go-check
	@mkdir -p $(@D)
	@echo "e2e: building kasbox (kube-apiserver $(E2E_KUBE_VERSION) + embedded etcd); the first build takes several minutes"
	@t0=$$(date +%s); \
	cd test/e2e/apiserver && $(E2E_GOBUILD) -o $@.tmp . && mv $@.tmp $@ && \
	t=$$(( $$(date +%s) - t0 )); echo "e2e: built kasbox in $${t}s"; \
	test -f $(E2E_BUILD)/kasbox.build-time || echo "$$t" > $(E2E_BUILD)/kasbox.build-time

$(E2E_BIN)/kubectl: test/e2e/apiserver/go.mod test/e2e/apiserver/go.sum test/e2e/e2e.mk | e2e-go-check
	@mkdir -p $(@D)
	@t0=$$(date +%s); \
	cd test/e2e/apiserver && $(E2E_GOBUILD) -o $@.tmp k8s.io/kubernetes/cmd/kubectl && mv $@.tmp $@ && \
	t=$$(( $$(date +%s) - t0 )); echo "e2e: built kubectl in $${t}s"; \
	test -f $(E2E_BUILD)/kubectl.build-time || echo "$$t" > $(E2E_BUILD)/kubectl.build-time

$(E2E_BIN)/clientgo-elector: $(E2E_ELECT_SRCS) | e2e-go-check
	@mkdir -p $(@D)
	@t0=$$(date +%s); \
	cd test/e2e/clientgo-elector && $(E2E_GOBUILD) -o $@.tmp . && mv $@.tmp $@ && \
	t=$$(( $$(date +%s) - t0 )); echo "e2e: built clientgo-elector in $${t}s"; \
	test -f $(E2E_BUILD)/clientgo-elector.build-time || echo "$$t" > $(E2E_BUILD)/clientgo-elector.build-time

# client-go v0.23, the last release with the endpoints, configmaps and
# MultiLock types (its own go.mod; no version stamp, it is not k8s's).
$(E2E_BIN)/clientgo-elector-v023: $(E2E_V023_SRCS) | e2e-go-check
	@mkdir -p $(@D)
	@t0=$$(date +%s); \
	cd test/e2e/clientgo-elector-v023 && $(E2E_GOENV) nice -n 10 $(GO) build -p 2 -o $@.tmp . && mv $@.tmp $@ && \
	t=$$(( $$(date +%s) - t0 )); echo "e2e: built clientgo-elector-v023 in $${t}s"; \
	test -f $(E2E_BUILD)/clientgo-elector-v023.build-time || echo "$$t" > $(E2E_BUILD)/clientgo-elector-v023.build-time

e2e-bins: $(E2E_BIN)/kasbox $(E2E_BIN)/kubectl $(E2E_BIN)/clientgo-elector $(E2E_BIN)/clientgo-elector-v023
	@for b in kasbox kubectl clientgo-elector clientgo-elector-v023; do \
		test -f $(E2E_BUILD)/$$b.build-time && \
		echo "e2e: $$b: first build took $$(cat $(E2E_BUILD)/$$b.build-time)s (now cached in $(E2E_BIN))"; \
	done; true

# make test builds the harness in the background, at nice 19, while the
# C suites run (they mostly wait on timers and sockets), and waits for it
# just before the e2e stage: on a fresh clone the Go build is the longest
# stage of all.  A make test that stops early leaves the build to finish
# on its own; its output is in $(E2E_BUILD)/prebuild.log.
E2E_PREBUILD_WAIT ?= 2400
e2e-prebuild:
	@sh test/prebuild.sh start $(E2E_BUILD) "the e2e harness" "$(MAKE)" e2e-bins

e2e-prebuilt:
	@sh test/prebuild.sh wait $(E2E_BUILD) "the e2e harness" $(E2E_PREBUILD_WAIT)

E2E_LEADERD ?= $(CURDIR)/leaderd
E2E_APISERVER_FLAGS ?=
E2E_ENV = LEADERD=$(E2E_LEADERD) KASBOX=$(E2E_BIN)/kasbox \
	  E2E_APISERVER_FLAGS="$(E2E_APISERVER_FLAGS)" \
	  CLIENTGO_ELECTOR=$(E2E_BIN)/clientgo-elector \
	  CLIENTGO_ELECTOR_V023=$(E2E_BIN)/clientgo-elector-v023 REPO=$(CURDIR) \
	  LEADERD_TESTHOOKS=$(CURDIR)/$(BUILD)/leaderd-testhooks \
	  E2E_WORK=$(E2E_BUILD)/run

# Two pytest workers, each with its own harness (a kube-apiserver costs
# about 10 s of CPU to start and little after): the tests mostly wait on
# election timings.  A file stays on one worker, so a file's harness
# fixtures (the second, CLE harness) start once.  E2E_JOBS=0: one process.
E2E_JOBS ?= 2
# test_saywhy.py's skewed clock is the test-hooks build's.
e2e: leaderd $(BUILD)/leaderd-testhooks e2e-bins
	@rm -rf $(E2E_BUILD)/run && mkdir -p $(E2E_BUILD)/run
	cd test/e2e && $(E2E_ENV) KUBECTL=$(E2E_BIN)/kubectl $(E2E_PYTEST) \
		$(if $(filter-out 0,$(E2E_JOBS)),-n $(E2E_JOBS) --dist loadfile) .

# Against an existing cluster: KUBECONFIG names it (its current context
# and a namespace where that user may manage Leases, Roles and
# RoleBindings; E2E_NAMESPACE, default the context's or "default").
# kubectl comes from PATH if there is one.
E2E_KUBECTL_CLUSTER = $(shell command -v kubectl 2>/dev/null)
e2e-cluster: leaderd $(E2E_BIN)/clientgo-elector $(E2E_BIN)/clientgo-elector-v023 $(if $(E2E_KUBECTL_CLUSTER),,$(E2E_BIN)/kubectl)
	@test -n "$(KUBECONFIG)" || { echo "make e2e-cluster: FAILED: set KUBECONFIG=path to an existing cluster's kubeconfig"; exit 1; }
	@rm -rf $(E2E_BUILD)/run && mkdir -p $(E2E_BUILD)/run
	cd test/e2e && $(E2E_ENV) E2E_CLUSTER_KUBECONFIG=$(abspath $(KUBECONFIG)) \
		E2E_NAMESPACE=$(E2E_NAMESPACE) \
		KUBECTL=$(or $(E2E_KUBECTL_CLUSTER),$(E2E_BIN)/kubectl) $(E2E_PYTEST) .

# The HA harness (test/e2e/ha.py): one control plane of five processes,
# one scenario at a time, niced.  It needs kasbox, kubectl and the
# client-go elector only.
E2E_HA_ONLY ?=
# Logs and results.json in build/e2e/ha (the smoke: build/e2e/ha-smoke).
E2E_HA_RUN = @rm -rf $(1) && mkdir -p $(1) && \
	cd test/e2e && $(E2E_ENV) E2E_WORK=$(1) \
	KUBECTL=$(E2E_BIN)/kubectl nice -n 5 $(PYTHON) ha.py --json $(1)/results.json
e2e-ha: leaderd $(E2E_BIN)/kasbox $(E2E_BIN)/kubectl $(E2E_BIN)/clientgo-elector
	$(call E2E_HA_RUN,$(E2E_BUILD)/ha) $(if $(E2E_HA_ONLY),--only $(E2E_HA_ONLY))

e2e-ha-smoke: leaderd $(E2E_BIN)/kasbox $(E2E_BIN)/kubectl $(E2E_BIN)/clientgo-elector
	$(call E2E_HA_RUN,$(E2E_BUILD)/ha-smoke) --smoke
