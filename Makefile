# leaderd -- leader-election sidecar for Kubernetes.
#
#   make            build ./leaderd
#   make deps       install the Debian packages the build and tests need
#   make check      the fast loop: layer check, unit tests and simulation,
#                   fuzz-corpus replay, integration (with the test kit's
#                   own test)
#   make test       everything CI runs (the README's test command): the
#                   build, make check's stages, the fault suite, deploy
#                   tests, end-to-end tests, hygiene, and the sanitizer
#                   pass (make sanitize), each once; both print the wall
#                   time of each stage at the end
#   make sanitize   unit tests, simulation, fuzz replay and an
#                   integration subset under ASan/UBSan
#   make chaos      below the elector, as root: leaderd in cgroups (CPU
#                   limits, the freezer), in network namespaces cut by
#                   nft, and against a kube-apiserver that answers 429
#                   (test/faults/faults.mk; a smoke runs in make faults)
#   make demo       a local demo: test API server and three leaderd
#   make install    leaderd and its man pages (PREFIX, DESTDIR)
#   make plugin     kubectl leaderd's krew archives and manifest
#   make check-layers   lib/'s layer rule (lib/layers.mk), also in check
#   make e2e-ha     eight faults of an HA control plane (three etcd members,
#                   two kube-apiservers) under leaderd and client-go
#                   electors, one table row each (test/e2e/README.md);
#                   about 8 minutes, not in make test, which runs its
#                   smoke (scenario 1, about a minute: e2e-ha-smoke)
#   make SANITIZE=address,undefined check   make check under sanitizers

VERSION	?= 0.1.0
CC	?= cc
# openssl: the TLS library under Debian's libcurl4-openssl-dev, whose
# calls lib/api/kube_tls.c makes (the static build: Mbed TLS, static.mk).
PKGS	 = libev libcurl jansson yaml-0.1 openssl
BUILD	?= build
# The top of the build tree, whatever variant a run builds below it.
TOP_BUILD := $(BUILD)
# This machine's architecture, in Debian's words (amd64, arm64).
HOST_ARCH := $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
PYTHON	?= python3

WARN	 = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	   -Wpointer-arith -Wcast-qual -Wsign-compare
ifeq ($(CI),true)
WARN	+= -Werror
endif
ifneq ($(SANITIZE),)
SANFLAGS = -fsanitize=$(SANITIZE) -fno-sanitize-recover=all \
	   -fno-omit-frame-pointer
BUILD	:= $(BUILD)/san
# Every sanitizer report fails the program that hit it: the first UBSan
# error aborts, and LeakSanitizer makes the exit status non-zero (here:
# SIGABRT) when a leak is found at exit, so a daemon that leaks fails
# "exit 0 after SIGTERM".  Exported to every test program.
ASAN_OPTIONS	?= detect_leaks=1:abort_on_error=1
UBSAN_OPTIONS	?= halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS UBSAN_OPTIONS
# The daemon the tests run.  A sanitized build never replaces ./leaderd
# (the binary that is shipped and packaged): it stays $(BUILD)/leaderd.
LEADERD_TARGET = $(BUILD)/leaderd
# The tests' daemons write their stderr under one --basetemp, which is
# scanned for sanitizer reports afterwards (a report fails the run even
# where a test ignored the exit status).
SAN_PYTEST = --basetemp=$(CURDIR)/$(BUILD)/pytest-$@
SAN_SCAN   = sh test/hygiene/sanscan.sh $(BUILD)/pytest-$@
else
LEADERD_TARGET = leaderd
SAN_PYTEST =
SAN_SCAN   = @:
endif
LEADERD_BIN = $(CURDIR)/$(LEADERD_TARGET)

# libev ships no .pc file on Debian; fall back to plain -lev.
PKG_CFLAGS := $(shell pkg-config --cflags $(filter-out libev,$(PKGS)) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(filter-out libev,$(PKGS)) 2>/dev/null) \
	      $(shell pkg-config --libs libev 2>/dev/null || echo -lev)

# make STATIC=1: one static binary over a libcurl built for HTTP(S)
# only and a trimmed Mbed TLS, what the image ships; LIBC=musl builds it
# with musl, STATIC_ARCH=arm64 for arm64 (from amd64: Debian's cross
# toolchain).  See deploy/image/static.mk, which sets CC and AR.
ifneq ($(STATIC),)
BUILD	:= $(BUILD)/static
STATIC_ROOT := $(BUILD)
STATIC_ARCH ?= $(HOST_ARCH)
ifneq ($(STATIC_ARCH),$(HOST_ARCH))
BUILD	:= $(BUILD)/$(STATIC_ARCH)
endif
ifeq ($(LIBC),musl)
BUILD	:= $(BUILD)/musl
endif
LEADERD_TARGET = $(BUILD)/leaderd
include deploy/image/static.mk
endif

# The source revision, for --version and leaderd_build_info: the commit,
# "-dirty" when the work tree differs from it, "unknown" outside a
# checkout.  Worked out once and passed down to every sub-make; only
# lib/base/version.o is compiled with it, and rebuilt when it changes.
ifeq ($(origin REVISION),undefined)
REVISION := $(shell git describe --always --dirty --abbrev=12 --exclude='*' 2>/dev/null || echo unknown)
endif
export REVISION

# The Go build cache the test tools (kube-apiserver and kubectl, the
# client-go electors, Helm, promtool) are built with: Go's own (go env
# GOCACHE), shared by every clone on the machine, so that a fresh clone
# links them from it instead of compiling them for minutes beside the
# tests.  A machine without it builds them once, in the background.
# GO_TOOLS_CACHE=DIR keeps a cache apart.
ifeq ($(origin GO_TOOLS_CACHE),undefined)
GO_TOOLS_CACHE := $(shell go env GOCACHE 2>/dev/null)
endif

CFLAGS	?= -O2 -g
CFLAGS	+= -std=c11 -D_GNU_SOURCE $(WARN) $(SANFLAGS) -Ilib $(PKG_CFLAGS) \
	   -DLEADERD_VERSION='"$(VERSION)"'
LDFLAGS	+= $(SANFLAGS)

.SECONDEXPANSION:
# Objects and archives are kept, though make finds some of them only
# through the rules above (intermediate files are deleted otherwise).
.SECONDARY:

# lib/ is one folder per layer; lib/layers.mk says which layer may use
# which.  Each folder becomes one archive, and the daemon links them top
# to bottom (LAYERS), so nothing keeps a list of objects by hand.
include lib/layers.mk
LIB_SRCS = $(foreach l,$(LAYERS),$(wildcard lib/$(l)/*.c))
LIB_OBJS = $(LIB_SRCS:lib/%.c=$(BUILD)/lib/%.o)
LIB_ARCHIVES = $(LAYERS:%=$(BUILD)/lib/lib%.a)
# The archives a program needs when its code sits in layer $(1): that
# layer's and those of the layers below it, in link order.
layer_archives = $(foreach l,$(1) $(LAYER_$(1)),$(BUILD)/lib/lib$(l).a)
# The layer of a lib/ module, by its name: $(call layer_of,elector) = core.
layer_of = $(patsubst lib/%/,%,$(dir $(firstword $(wildcard lib/*/$(1).c))))

# Header dependencies come from the compiler (-MMD -MP), one .d per object.
DEPFLAGS = -MMD -MP

.PHONY: image image-test plugin plugin-test sanitize sanitize-stages bench all deps test check check-layers unit integration integration-san deploy-test demo clean fuzz fuzz-run fuzz-replay soak e2e

all: $(LEADERD_TARGET)

$(BUILD)/lib/%.o: lib/%.c | $(STATIC_DEP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

# The revision's stamp: rewritten only when the revision changes.
.PHONY: FORCE
$(TOP_BUILD)/revision: FORCE
	@mkdir -p $(@D) && printf '%s\n' '$(REVISION)' >$@.new && \
	{ cmp -s $@.new $@ && rm -f $@.new || mv -f $@.new $@; }

$(BUILD)/lib/base/version.o: $(TOP_BUILD)/revision
$(BUILD)/lib/base/version.o: CFLAGS += -DLEADERD_REVISION='"$(REVISION)"'

$(BUILD)/lib/lib%.a: $$(addprefix $(BUILD)/,$$(addsuffix .o,$$(basename $$(wildcard lib/$$*/*.c))))
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/cmd/%.o: cmd/leaderd/%.c | $(STATIC_DEP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

CMD_SRCS = $(wildcard cmd/leaderd/*.c)
CMD_OBJS = $(CMD_SRCS:cmd/leaderd/%.c=$(BUILD)/cmd/%.o)

# STATIC_LINK: the static build's own libraries (static.mk); a rebuilt
# one relinks the daemon.
$(BUILD)/leaderd: $(CMD_OBJS) $(LIB_ARCHIVES) $(STATIC_LINK)
	$(CC) $(LDFLAGS) -o $@ $(filter-out $(STATIC_LINK),$^) $(PKG_LIBS) -lm

# The daemon with the test-only clock hook (lib/base/clock.c,
# LEADERD_TEST_HOOKS), for the clock fault tests.  Never installed or
# shipped.
$(BUILD)/leaderd-testhooks: $(CMD_SRCS) $(LIB_SRCS) $(wildcard lib/*/*.h) $(TOP_BUILD)/revision | $(STATIC_DEP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DLEADERD_TEST_HOOKS \
		-DLEADERD_REVISION='"$(REVISION)"' -o $@ $(CMD_SRCS) \
		$(LIB_SRCS) $(LDFLAGS) $(PKG_LIBS) -lm

# The layer rule, checked twice: no include goes up a layer or names a
# third-party header outside its layer, and each layer's archive, linked
# whole against only the archives below it, has no undefined symbol.  The
# links run bottom up, so the first failure names the lowest layer that
# calls up.  Beside it, the tree's own rules (test/layers/check-tree.sh):
# no .c in lib/ or cmd/ over 600 lines, no patch leftover or editor
# backup tracked.  Then the checks are shown to fail on a planted
# violation.
reverse = $(if $(1),$(call reverse,$(wordlist 2,$(words $(1)),$(1))) $(firstword $(1)))
LAYER_SPECS = $(foreach l,$(LAYERS) cmd,"$(l)|$(LAYER_$(l))|$(EXT_$(l))|$(EXT_HEADERS)")
check-layers: $(LIB_ARCHIVES) $(BUILD)/layers/stub_main.o
	@sh test/layers/check-includes.sh $(LAYER_SPECS)
	@sh test/layers/check-tree.sh
	@$(foreach l,$(call reverse,$(LAYERS)),$(CC) $(LDFLAGS) \
		-o $(BUILD)/layers/$(l) $(BUILD)/layers/stub_main.o \
		-Wl,--whole-archive $(BUILD)/lib/lib$(l).a -Wl,--no-whole-archive \
		$(call layer_archives,$(l)) $(PKG_LIBS) -lm || { \
		echo "check-layers: layer $(l), linked with only the layers it may" \
		"use ($(or $(LAYER_$(l)),none)), has undefined references: a" \
		"call goes up a layer (lib/layers.mk)" >&2; exit 1; };)
	@CC="$(CC)" CFLAGS="$(CFLAGS)" LDFLAGS="$(LDFLAGS)" \
		sh test/layers/selftest.sh $(BUILD)/layers $(LAYER_SPECS)
	@echo "check-layers: $(words $(LAYERS)) layers; every include and every link follows lib/layers.mk; no .c over 600 lines, no stray file"

$(BUILD)/layers/stub_main.o: test/layers/stub_main.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

ifeq ($(SANITIZE)$(STATIC),)
leaderd: $(BUILD)/leaderd
	cp $< $@.tmp && mv -f $@.tmp $@
else
leaderd: $(BUILD)/leaderd
	@echo "make: this daemon is $(BUILD)/leaderd; ./leaderd is left as it is"
endif

# Debian packages for the build and the tests.  Quiet and quick when all
# are present already.  iproute2 and nftables: the kernel partitions of
# the chaos suite (network namespaces, veth, a bridge, nft rules).  STATIC_DEB_PKGS builds the image's static binary
# (deploy/image/static.mk): the Dockerfile installs them too.
STATIC_DEB_PKGS = build-essential ca-certificates dpkg-dev python3 \
	   musl-tools autoconf automake libtool
# make image builds arm64 too (Debian's cross toolchain), and image-test
# runs that binary under qemu-user: make image installs them (image-deps),
# so that make deps, and so CI's make test, does not pay for them.
IMAGE_DEB_PKGS = gcc-aarch64-linux-gnu qemu-user-static
DEB_PKGS = $(STATIC_DEB_PKGS) \
	   pkg-config libev-dev libcurl4-openssl-dev libssl-dev \
	   libjansson-dev libyaml-dev libcmocka-dev openssl curl \
	   python3-pytest valgrind mandoc \
	   iproute2 nftables
# $(call apt_install,TARGET,PACKAGES): install those not installed.
apt_install = missing=$$(for p in $(2); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "make $(1): installing$$(echo $$missing | sed 's/^/ /')"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
			--no-install-recommends $$missing >/dev/null; \
	fi
deps:
	@$(call apt_install,deps,$(DEB_PKGS))
	@$(PYTHON) -c 'import pytest, yaml, prometheus_client, xdist' 2>/dev/null || \
		$(PYTHON) -m pip install -q pytest pyyaml prometheus_client \
			pytest-xdist

# Unit tests: one cmocka program per module, linked against the archive
# of the module's layer and those below it (lib/layers.mk).  A test that
# is not named after its module says which one it tests.
UNIT_TESTS = duration config lease elector http_parse kubeconfig localapi child \
	     compat_await \
	     metrics \
	     proxy log sock legacy text netaddr lock epslice gate \
	     compat_vapor appprobe ctlmsg \
	     shard leasecand \
	     fifo tool leaseview review doctor
UNIT_BINS  = $(UNIT_TESTS:%=$(BUILD)/test/%_test) $(BUILD)/test/elector_sim \
	     $(BUILD)/test/shard_sim $(BUILD)/test/elector_explore
unit_module_elector_sim = elector
unit_module_elector_explore = elector
unit_module_shard_sim = shard
# The /leader answer against its printf formatting (localapi.c), and
# base/mem.c.
UNIT_TESTS += localapi_body mem
unit_module_localapi_body = localapi
unit_archives = $(call layer_archives,$(call layer_of,$(or $(unit_module_$(1)),$(1))))

$(BUILD)/test/obj/%.o: test/unit/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -Itest/unit -c -o $@ $<

$(BUILD)/test/%_test: $(BUILD)/test/obj/%_test.o $$(call unit_archives,$$*)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lcmocka -lm

$(BUILD)/test/elector_sim: $(BUILD)/test/obj/elector_sim.o $$(call unit_archives,elector_sim)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lcmocka -lm

# Every interleaving of a few electors' events to a time horizon
# (EXPLORE_DEPTH=N adds N steps to each of its horizons).
$(BUILD)/test/elector_explore: $(BUILD)/test/obj/elector_explore.o $(BUILD)/test/obj/elector_explore_model.o $$(call unit_archives,elector_explore)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

# Trace validation: replays the steps a LEADERD_TEST_HOOKS daemon traced
# ($LEADERD_TEST_ELECTOR_TRACE) through the pure elector; built by
# `make unit`, run by test/faults/test_trace.py.
$(BUILD)/test/elector_replay: $(BUILD)/test/obj/elector_replay.o $$(call unit_archives,elector_replay)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm
unit_module_elector_replay = elector

# The shard groups' simulation (the planner over the elector).
$(BUILD)/test/shard_sim: $(BUILD)/test/obj/shard_sim.o $$(call unit_archives,shard_sim)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

# sock_test wraps bind() to swap the socket for a symlink mid-listen.
$(BUILD)/test/sock_test: LDFLAGS += -Wl,--wrap=bind

unit: $(UNIT_BINS) $(BUILD)/test/elector_replay
	@set -e; for t in $(UNIT_BINS); do \
		echo "== $$t"; \
		TEST_DIR=$(CURDIR)/test/unit $$t; \
	done

# Fuzz targets: replayed over their corpora under the normal compiler by
# `make test`; run for real with libFuzzer by `make fuzz`.  Each links the
# layer of the module it is named after, and the layers below.
FUZZ_TARGETS	 = lease config kubeconfig http_parse legacy leaseview
FUZZ_SECONDS	?= 60
FUZZ_CC		?= clang

$(BUILD)/fuzz/obj/%.o: test/fuzz/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -Itest/fuzz -c -o $@ $<

$(BUILD)/fuzz/%_replay: $(BUILD)/fuzz/obj/%_fuzz.o $(BUILD)/fuzz/obj/replay.o $(BUILD)/fuzz/obj/tmpfile.o $$(call layer_archives,$$(call layer_of,$$*))
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

fuzz-replay: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/%_replay)
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "== fuzz replay $$t"; \
		$(BUILD)/fuzz/$${t}_replay test/fuzz/corpus/$$t; \
	done

fuzz:
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz: $(FUZZ_CC) is missing (apt-get install clang)"; exit 1; }
	$(MAKE) --no-print-directory fuzz-run

FUZZ_FLAGS = -g -O1 -std=c11 -D_GNU_SOURCE -Ilib -Itest/fuzz $(PKG_CFLAGS) \
	     -DLEADERD_VERSION='"$(VERSION)"' \
	     -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer
# The sources a libFuzzer build of target $(1) compiles: its layer's and
# those of the layers below.
fuzz_srcs = $(foreach l,$(call layer_of,$(1)) $(LAYER_$(call layer_of,$(1))),$(wildcard lib/$(l)/*.c))
fuzz-run:
	@set -e; $(foreach t,$(FUZZ_TARGETS), \
		mkdir -p $(BUILD)/fuzz/run/$(t); \
		$(FUZZ_CC) $(FUZZ_FLAGS) -o $(BUILD)/fuzz/$(t)_fuzz \
		    test/fuzz/$(t)_fuzz.c test/fuzz/tmpfile.c $(call fuzz_srcs,$(t)) \
		    $(PKG_LIBS) -lm; \
		echo "== fuzz $(t) for $(FUZZ_SECONDS)s"; \
		$(BUILD)/fuzz/$(t)_fuzz -max_total_time=$(FUZZ_SECONDS) \
		    -artifact_prefix=$(BUILD)/fuzz/run/$(t)/ \
		    $(BUILD)/fuzz/run/$(t) test/fuzz/corpus/$(t) 2>&1 | \
		    grep -E '^(#[0-9]+.*DONE|Done|==[0-9]+==ERROR|SUMMARY)' || true;)

# The /leader/watch streams' reader of the push figures (bench.py's,
# make bench-scale's part 3 and its smoke in the integration stage):
# test/bench/streamread.c, each event timed as its read returns.
BENCH_STREAMREAD = $(BUILD)/bench/streamread
$(BENCH_STREAMREAD): test/bench/streamread.c lib/codec/apitime.c lib/codec/apitime.h
	@mkdir -p $(@D)
	$(CC) -O2 $(WARN) -Ilib -o $@ test/bench/streamread.c lib/codec/apitime.c

# The integration suite, and the test kit's own tests (test/kit: the test
# API server, the process harness, the compat tests' peer pod, the
# fixtures the suites share).  Four pytest workers (pytest-xdist): every
# test has its own API server, lock and directories, and the suite mostly
# waits on election timings (about 70 s of CPU in 3 minutes with four;
# 5.7 minutes with two), so four at a time keep two cores only a third
# busy.  INTEGRATION_JOBS=0 runs it in one process.
INTEGRATION_JOBS ?= 4
# The sanitizer pass keeps two: an ASan build costs several times the CPU.
SAN_INTEGRATION_JOBS ?= 2
integration_pytest = $(PYTHON) -m pytest -q -x -p no:cacheprovider \
		     $(if $(filter-out 0,$(1)),-n $(1)) $(SAN_PYTEST)
INTEGRATION_PYTEST = $(call integration_pytest,$(INTEGRATION_JOBS))
# The test-hooks build (its clock hook) for the rows that move the clock;
# the push figures' stream reader for the bench smoke (test_bench_scale).
integration: $(LEADERD_TARGET) $(BUILD)/leaderd-testhooks $(BENCH_STREAMREAD)
	cd test && LEADERD=$(LEADERD_BIN) \
		LEADERD_TESTHOOKS=$(CURDIR)/$(BUILD)/leaderd-testhooks \
		LEADERD_STREAMREAD=$(CURDIR)/$(BENCH_STREAMREAD) \
		$(INTEGRATION_PYTEST) kit integration
	$(SAN_SCAN)

# The integration tests the sanitizer pass runs (test/integration node
# ids).  With the unit tests and the fuzz replay they run every C module
# and every lock type at run time:
#   elector, lease, kube, curlev, watch, lock (leases):
#	test_election, test_fencing, test_watch
#   lock (endpoints, configmaps, endpointsleases, configmapsleases),
#	legacy: test_locks
#   child and actions (run mode): test_run; label: test_label;
#	endpoints, epslice: test_endpoints;
#	metrics: test_metrics
#   httpd, http_parse, localapi, sock: test_localapi, test_push,
#	test_stepdown, test_security
#   proxy, kubeconfig, config and its config_* files, cfgfile,
#	duration, log: test_security's test_proxy_env, test_config,
#	test_election's test_json_logs_and_sighup_ignored
#   the control client (daemon/ctl, cmd ctl, ctlmsg, http_response,
#	sock's connects): test_ctl
#   several elections, the Events queue (fifo): test_elections
#   coordinated election (leasecand, daemon_cand): test_coordinated
#   shard groups (shard, daemon_shards*, the Lease list): test_shards'
#	balance, SIGTERM and pause
#   the kubectl plugin (tool/, leaseview, the merged kubeconfig):
#	test_plugin
#   the doctors (tool/doctor*, review): test_doctor
#   daemon, daemon_setup, daemon_stop, clock, buf, xmalloc: all of them.
# Measured with test/kit/coverage.sh (gcc --coverage, lines of lib/*.c
# run; 2026-12-03): this pass runs 88.4% of the lines where make check
# runs 89.4%, no module below 61% (sock.c, 61% in both); its 97
# integration tests alone run 74.9% where the whole suite's 143 run
# 76.7%, in 70 s instead of 176 s.  When a module or a feature is added,
# run coverage.sh with and without this list and add the test that
# reaches what it misses.
SAN_INTEGRATION = \
	test_election.py::test_three_instances_one_leader \
	test_election.py::test_sigterm_leader_releases_and_fails_over_fast \
	test_election.py::test_api_failure_leader_steps_down_in_time \
	test_election.py::test_token_rotation_keeps_working \
	test_election.py::test_json_logs_and_sighup_ignored \
	test_election.py::test_leadership_events_recorded_on_the_lease \
	test_election.py::test_ambiguous_write_then_409_keeps_leading \
	test_election.py::test_lease_deleted_by_admin_is_recreated \
	test_fencing.py::test_token_agreed_and_increasing_across_terms \
	test_watch.py::test_sigterm_handover_through_the_watch \
	test_watch.py::test_f22_410_relists_then_watches_from_the_new_rv \
	test_watch.py::test_f22_silent_stream_is_dead_after_its_timeout \
	test_watch.py::test_leader_sees_a_foreign_write_at_once \
	test_watch.py::test_watch_request_is_well_formed \
	test_locks.py::test_legacy_lock_one_leader \
	test_locks.py::test_legacy_failover_after_kill9 \
	test_locks.py::test_multilock_secondary_missing \
	test_locks.py::test_check_prints_the_lock \
	test_locks.py::test_multilock_holders_disagree \
	test_run.py::test_command_runs_while_leading_with_env_and_output \
	test_run.py::test_command_ignoring_sigterm_is_killed_after_grace \
	test_run.py::test_command_exit_restart_restarts_with_backoff \
	test_label.py::test_label_follows_leadership \
	test_label.py::test_label_patch_failures_are_retried_and_reasserted \
	test_endpoints.py::test_slice_follows_the_leader \
	test_endpoints.py::test_slice_write_failures_are_retried \
	test_metrics.py::test_metrics_election_and_failover \
	test_metrics.py::test_renew_failures_and_error_codes \
	test_localapi.py \
	test_push.py::test_events_on_connect_and_failover \
	test_push.py::test_blocking_read \
	test_push.py::test_stream_cap_and_healthz \
	test_push.py::test_stream_client_that_never_reads_is_dropped \
	test_push.py::test_head_and_pipelined_requests \
	test_push.py::test_sigterm_final_event_and_close \
	test_push.py::test_malformed_wait_is_400 \
	test_push.py::test_max_streams_setting \
	test_push.py::test_leadership_running_out_is_pushed \
	test_stepdown.py::test_release_moves_leadership_and_cools_down \
	test_stepdown.py::test_release_refusals \
	test_security.py::test_proxy_env \
	test_security.py::test_hostile_holder_and_status \
	test_security.py::test_host_header_checked_on_tcp_only \
	test_security.py::test_connection_flood_under_low_nofile_keeps_lease \
	test_security.py::test_per_peer_cap_for_non_loopback_peers \
	test_security.py::test_bidi_and_invisible_holder_escaped \
	test_ctl.py::test_status_human_and_json \
	test_ctl.py::test_release_moves_leadership \
	test_ctl.py::test_wait_leader \
	test_ctl.py::test_cannot_reach \
	test_elections.py::test_sigterm_releases_every_election \
	test_elections.py::test_streams_and_metrics_carry_the_election \
	test_elections.py::test_every_election_records_its_event \
	test_coordinated.py::test_coordinated_assignment \
	test_coordinated.py::test_handover_auto_to_the_candidate_the_controller_picks \
	test_coordinated.py::test_coordinated_falls_back_when_not_served \
	test_coordinated.py::test_foreign_candidates_do_not_stop_the_pings \
	test_coordinated.py::test_candidate_errors_back_off \
	test_shards.py::test_initial_balance_and_api \
	test_shards.py::test_sigterm_releases_and_deletes_member \
	test_shards.py::test_pause_releases_every_shard \
	test_plugin.py \
	test_doctor.py \
	test_config.py
integration-san: $(LEADERD_TARGET)
	cd test/integration && LEADERD=$(LEADERD_BIN) \
		$(call integration_pytest,$(SAN_INTEGRATION_JOBS)) \
		$(SAN_INTEGRATION)
	$(SAN_SCAN)

# The deploy tests check the shipped image's binary (IMAGE_BIN) and its
# licences; test_install.py the man pages against it.  Two workers: the
# slow rows build a Dockerfile's stage and hand-shake TLS.  make test
# builds the image's binary in the background at its start (the static
# third-party libraries take a CPU-minute), image-prebuilt waits for it.
deploy-test: image-bin
	cd test/deploy && LEADERD=$(CURDIR)/$(IMAGE_BIN) \
		LEADERD_LICENSES=$(CURDIR)/$(IMAGE_LICENSES) \
		$(PYTHON) -m pytest -q -p no:cacheprovider -n 2 .

IMAGE_PREBUILD_WAIT ?= 1200
.PHONY: image-prebuild image-prebuilt
image-prebuild:
	@sh test/prebuild.sh start $(IMAGE_BUILD) "the image's binary" "$(MAKE)" image-bin

image-prebuilt:
	@sh test/prebuild.sh wait $(IMAGE_BUILD) "the image's binary" $(IMAGE_PREBUILD_WAIT)

# The docs say what leaderd does (test/docs/check_docs.py): the marked
# examples run, the defaults quoted are -n -v's, the quoted log lines
# are the sources', links and sections resolve, the deploy/ map is
# whole, the man pages render; then its self-test plants a mistake of
# each kind in a copy and sees it refused.  A few seconds, no network.
.PHONY: docs-check
docs-check: $(LEADERD_TARGET)
	$(PYTHON) test/docs/check_docs.py --leaderd $(LEADERD_BIN)
	$(PYTHON) test/docs/check_docs.py --self-test --leaderd $(LEADERD_BIN)

# make check: the fast loop, about 3.5 minutes from a warm build.  The
# layer check (check-layers) comes first.
CHECK_STAGES = $(LEADERD_TARGET) check-layers docs-check unit fuzz-replay \
	       integration
check:
	@sh test/stages.sh "make check" $(MAKE) --no-print-directory -- \
		$(CHECK_STAGES)

# make test: everything CI runs, each stage once, one after the other
# (test/stages.sh; a table of their wall times at the end).  The deploy
# tests check the shipped image (its file set and size, the binary in a
# chroot without /proc), and the end-to-end tests a real cluster's view
# of it, so both run on the plain build only.  The plain `make test` also
# runs the fault suite, the hygiene tests (valgrind, fd soak) and the
# sanitizer pass, so CI runs them with the README's command.
TEST_STAGES = $(if $(SANITIZE),$(CHECK_STAGES),$(LEADERD_TARGET) \
	      e2e-prebuild helm-prebuild image-prebuild \
	      $(wordlist 2,$(words $(CHECK_STAGES)),$(CHECK_STAGES)) \
	      man-lint faults image-prebuilt deploy-test monitoring-test helm-test \
	      e2e-prebuilt e2e e2e-ha-smoke hygiene sanitize)
test:
	@sh test/stages.sh "make test" $(MAKE) --no-print-directory -- \
		$(TEST_STAGES)

# The sanitizer pass: the unit tests (with the simulation), the fuzz
# replay and SAN_INTEGRATION under ASan/UBSan, in $(BUILD)/san.
sanitize:
	@$(MAKE) --no-print-directory SANITIZE=address,undefined \
		sanitize-stages

sanitize-stages:
	@sh test/stages.sh sanitize $(MAKE) --no-print-directory -- \
		$(LEADERD_TARGET) unit fuzz-replay integration-san

# make install [PREFIX=/usr/local] [DESTDIR=]: the daemon to sbin, as a
# daemon the system starts (a container runtime, a service manager)
# rather than a command users type, and its man pages: leaderd(8) and
# leaderd.yaml(5).  man-lint checks both pages; make test runs it.
PREFIX	?= /usr/local
SBINDIR	?= $(PREFIX)/sbin
MANDIR	?= $(PREFIX)/share/man
INSTALL	?= install
MAN8	 = docs/man/leaderd.8
MAN5	 = docs/man/leaderd.yaml.5

.PHONY: install man-lint
install: $(LEADERD_TARGET)
	$(INSTALL) -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(MANDIR)/man5
	$(INSTALL) -m 0755 $(LEADERD_TARGET) $(DESTDIR)$(SBINDIR)/leaderd
	$(INSTALL) -m 0644 $(MAN8) $(DESTDIR)$(MANDIR)/man8/
	$(INSTALL) -m 0644 $(MAN5) $(DESTDIR)$(MANDIR)/man5/

man-lint:
	@command -v mandoc >/dev/null || \
		{ echo "make man-lint: mandoc is missing (make deps)"; exit 1; }
	mandoc -T lint -W warning $(MAN8) $(MAN5)

# The OCI image, without a docker engine: mkrootfs.sh's file set (what
# the Dockerfile's runtime stage holds) as one layer, in an OCI image
# layout directory and a tarball of it.  image-test checks every digest,
# unpacks it and runs leaderd from it as uid 65532 (test/deploy).
# The image ships the static build (deploy/image/static.mk) with
# IMAGE_LIBC, musl by default (docs/building.md says why), for each of
# IMAGE_ARCHS: one OCI image index per tag, one manifest per
# architecture (arm64 is cross-built on amd64).  The shared build (make)
# stays the one for development and the sanitizers.  image-bin and
# image-rootfs build one architecture, IMAGE_ARCH (this machine's by
# default): the binary, and the file set in ROOTFS, which the
# Dockerfile makes too.  Beside the licences, image-bin writes the
# image's SBOM (deploy/image/sbom.py, SPDX 2.3 JSON, from COMPONENTS),
# which mkrootfs.sh puts in /licenses with them; make image also leaves
# each architecture's copy beside the tarball, IMAGE_SBOM, the file to
# attach to that architecture's manifest when the image is pushed
# (cosign attest --type spdxjson, oras attach).
IMAGE_LIBC	?= musl
IMAGE_ARCH	?= $(HOST_ARCH)
IMAGE_ARCHS	?= amd64 arm64
image_build	 = $(TOP_BUILD)/static$(if $(filter-out $(HOST_ARCH),$(1)),/$(1))$(if $(filter musl,$(IMAGE_LIBC)),/musl)
IMAGE_BUILD	 = $(call image_build,$(IMAGE_ARCH))
IMAGE_BIN	 = $(IMAGE_BUILD)/leaderd
IMAGE_LICENSES	 = $(IMAGE_BUILD)/licenses
IMAGE_DIR	 = $(TOP_BUILD)/image
IMAGE_TAR	 = $(IMAGE_DIR)/leaderd-$(VERSION).oci.tar
ROOTFS		?= $(IMAGE_DIR)/rootfs-$(IMAGE_ARCH)
IMAGE_SBOM	 = $(IMAGE_DIR)/leaderd-$(VERSION)-$(1).spdx.json
.PHONY: image-bin image-rootfs
image-bin:
	@$(MAKE) --no-print-directory STATIC=1 LIBC=$(IMAGE_LIBC) \
		STATIC_ARCH=$(IMAGE_ARCH) SANITIZE= \
		$(IMAGE_BIN) $(IMAGE_LICENSES)/COMPONENTS \
		$(IMAGE_LICENSES)/sbom.spdx.json

# The SBOM of a static build's licences (make STATIC=1, as image-bin
# runs it): the C library of a native build is the build host's
# package, a cross build's musl is built from source like the rest;
# Debian's ca-certificates is listed unless CA_BUNDLE names another
# bundle for mkrootfs.sh.  Its time is the commit's (SOURCE_DATE_EPOCH),
# so the same tree writes the same bytes.
ifneq ($(STATIC),)
SBOM_HOST_LIBC	 = $(if $(MUSL_GCC),,--host-package $(LIBC_NAME)=$(LIBC_PKG)$(if $(HOST),-$(STATIC_ARCH)-cross))
$(LICENSES_DIR)/sbom.spdx.json: $(LICENSES_DIR)/COMPONENTS $(LEADERD_TARGET) \
		deploy/image/sbom.py $(wildcard deploy/image/patches/*.patch)
	SOURCE_DATE_EPOCH=$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null)} \
		$(PYTHON) deploy/image/sbom.py $(LICENSES_DIR) $@ \
		--arch $(STATIC_ARCH) --binary $(LEADERD_TARGET) \
		--revision $(REVISION) --strip $(or $(STRIP),strip) \
		--apt-dir $(STATIC_ROOT)/apt $(SBOM_HOST_LIBC) \
		$(if $(CA_BUNDLE),,--ca-certificates)
endif

image-rootfs: image-bin
	rm -rf $(ROOTFS)
	STRIP=$(if $(filter arm64,$(IMAGE_ARCH)),aarch64-linux-gnu-strip,strip) \
		sh deploy/image/mkrootfs.sh $(IMAGE_BIN) $(ROOTFS) \
		$(IMAGE_LICENSES)

.PHONY: image-deps
image-deps:
	@$(call apt_install,image,$(IMAGE_DEB_PKGS))

image: image-deps
	@set -e; for a in $(IMAGE_ARCHS); do \
		$(MAKE) --no-print-directory image-rootfs IMAGE_ARCH=$$a \
		ROOTFS=$(IMAGE_DIR)/rootfs-$$a; done
	$(PYTHON) deploy/image/oci.py build --tag $(VERSION) \
		$(foreach a,$(IMAGE_ARCHS),--platform $(a)=$(IMAGE_DIR)/rootfs-$(a)) \
		$(IMAGE_DIR)/oci $(IMAGE_TAR)
	@set -e; for a in $(IMAGE_ARCHS); do \
		cp $(IMAGE_DIR)/rootfs-$$a/licenses/sbom.spdx.json \
		$(call IMAGE_SBOM,$$a); echo "image: $(call IMAGE_SBOM,$$a)"; done

# make plugin: kubectl leaderd's krew archives, one per IMAGE_ARCHS
# (the image's static binary, stripped, as kubectl-leaderd, with
# LICENSE and the licences of what it links, as the image's /licenses),
# their SHA256SUMS, and PLUGIN_DIR/leaderd.yaml, the manifest
# deploy/krew/leaderd.yaml with those sums (deploy/krew/package.py).
# plugin-test checks them (test/deploy/test_krew.py, which deploy-test
# runs on an archive of IMAGE_BIN alone).
PLUGIN_DIR	 = $(TOP_BUILD)/plugin
.PHONY: plugin plugin-test
plugin: image-deps
	@set -e; for a in $(IMAGE_ARCHS); do \
		$(MAKE) --no-print-directory image-bin IMAGE_ARCH=$$a; done
	SOURCE_DATE_EPOCH=$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null)} \
		$(PYTHON) deploy/krew/package.py \
		--manifest deploy/krew/leaderd.yaml --license LICENSE \
		--out $(PLUGIN_DIR) --strip arm64=aarch64-linux-gnu-strip \
		$(foreach a,$(IMAGE_ARCHS),--licenses $(a)=$(call image_build,$(a))/licenses) \
		$(foreach a,$(IMAGE_ARCHS),$(a)=$(call image_build,$(a))/leaderd)

plugin-test: plugin
	cd test/deploy && LEADERD=$(CURDIR)/$(IMAGE_BIN) \
		LEADERD_LICENSES=$(CURDIR)/$(IMAGE_LICENSES) \
		LEADERD_PLUGIN_DIR=$(CURDIR)/$(PLUGIN_DIR) \
		LEADERD_PLUGIN_ARCHS="$(IMAGE_ARCHS)" \
		$(PYTHON) -m pytest -q -p no:cacheprovider test_krew.py

# image-test: the image checked, and each architecture's binary run from
# it (arm64's under qemu-user, Debian's qemu-user-static).
image-test: image
	cd test/deploy && LEADERD=$(CURDIR)/$(IMAGE_BIN) \
		LEADERD_LICENSES=$(CURDIR)/$(IMAGE_LICENSES) \
		LEADERD_IMAGE=$(CURDIR)/$(IMAGE_TAR) \
		LEADERD_IMAGE_ARCHS="$(IMAGE_ARCHS)" \
		$(PYTHON) -m pytest -q -p no:cacheprovider -rs test_image.py \
		test_sbom.py
	@echo "image-test: $(IMAGE_TAR): $$(wc -c <$(IMAGE_TAR)) bytes" \
		"(compressed layer, config, manifest, index)"

# Figures, printed: memory, CPU, API request rate, local API latency,
# handover times, of the image's binary (IMAGE_BIN), then the steady
# state of the shared build (OpenSSL) beside it; then CPU per /leader
# request of the image, the shared build and the client-go elector's
# net/http, under load from loadgen (test/bench/loadgen.c, a small wrk),
# and the image's footprint against a P-256 and an RSA-2048 API server
# (test/bench/speed.py).  The client-go elector's figures come beside
# leaderd's when test/e2e's is built (make e2e-bins).  Not part of make
# test.
BENCH_LOADGEN	 = $(BUILD)/bench/loadgen
$(BENCH_LOADGEN): test/bench/loadgen.c
	@mkdir -p $(@D)
	$(CC) -O2 $(WARN) -o $@ $<

BENCH_SPEED	 = $(PYTHON) test/bench/speed.py --loadgen $(BENCH_LOADGEN) \
		   --image $(IMAGE_BIN) --shared leaderd \
		   --clientgo $(E2E_BIN)/clientgo-elector
bench: image-bin leaderd $(BENCH_LOADGEN) $(BENCH_STREAMREAD) \
	$$(E2E_BIN)/clientgo-elector
	$(PYTHON) test/bench/bench.py --leaderd $(CURDIR)/$(IMAGE_BIN) \
		--streamread $(BENCH_STREAMREAD)
	$(PYTHON) test/bench/bench.py --leaderd $(CURDIR)/leaderd --only-steady
	$(BENCH_SPEED)

# Only speed.py's two tables (CPU per /leader request, footprint by key
# type): a few minutes rather than make bench's hour.
.PHONY: bench-speed
bench-speed: image-bin leaderd $(BENCH_LOADGEN) $$(E2E_BIN)/clientgo-elector
	$(BENCH_SPEED)

demo: $(LEADERD_TARGET)
	$(PYTHON) test/integration/demo.py --leaderd $(LEADERD_BIN)

clean:
	rm -rf $(BUILD) leaderd

-include $(shell find $(BUILD)/lib $(BUILD)/cmd $(BUILD)/test/obj $(BUILD)/fuzz/obj -name '*.d' 2>/dev/null)

-include test/e2e/e2e.mk
-include test/monitoring/monitoring.mk
-include test/helm/helm.mk
-include test/hygiene/hygiene.mk
-include test/faults/faults.mk

# Cost at cluster scale (docs/performance.md): sidecars per
# kube-apiserver and the herd after an outage, leaderd beside the
# client-go elector, on the e2e suite's kasbox (E2E_BUILD, make
# e2e-bins, built here if missing); local fan-out to /leader/watch
# streams and elections per sidecar on the test API server.  Not part
# of make test (its smoke is: test_bench_scale.py); about 30 minutes.
# BENCH_SCALE_ARGS: more scale.py flags, e.g. --parts 3.
.PHONY: bench-scale
bench-scale: image-bin $(BENCH_STREAMREAD) $(E2E_BIN)/kasbox \
	$(E2E_BIN)/clientgo-elector
	E2E_BIN=$(E2E_BIN) CLIENTGO_ELECTOR=$(E2E_BIN)/clientgo-elector \
		$(PYTHON) test/bench/scale.py --leaderd $(CURDIR)/$(IMAGE_BIN) \
		--streamread $(BENCH_STREAMREAD) $(BENCH_SCALE_ARGS)
