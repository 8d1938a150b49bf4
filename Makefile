# leaderd -- leader-election sidecar for Kubernetes.
#
#   make            build ./leaderd
#   make deps       install the Debian packages the build and tests need
#   make test       unit tests, simulation, fuzz-corpus replay, integration
#   make demo       a local demo: test API server and three leaderd
#   make SANITIZE=address,undefined test    the same under sanitizers

VERSION	?= 0.1.0
CC	?= cc
PKGS	 = libev libcurl jansson yaml-0.1
BUILD	?= build
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

# make STATIC=1: one static binary with a libcurl built for HTTP(S)
# only; see deploy/image/static.mk.
ifneq ($(STATIC),)
BUILD	:= $(BUILD)/static
LEADERD_TARGET = $(BUILD)/leaderd
include deploy/image/static.mk
PKG_CFLAGS := -I$(CURL_PREFIX)/include
PKG_LIBS   := $(CURL_LIB) -lssl -lcrypto -ljansson -lyaml -lev -lpthread
LDFLAGS	+= -static -Wl,--gc-sections
STATIC_DEP  = $(CURL_LIB)
endif

CFLAGS	?= -O2 -g
CFLAGS	+= -std=c11 -D_GNU_SOURCE $(WARN) $(SANFLAGS) -Ilib $(PKG_CFLAGS) \
	   -DLEADERD_VERSION='"$(VERSION)"'
LDFLAGS	+= $(SANFLAGS)

LIB_SRCS = $(wildcard lib/*.c)
LIB_OBJS = $(LIB_SRCS:lib/%.c=$(BUILD)/lib/%.o)

.PHONY: image image-test sanitize bench all deps test unit integration deploy-test demo clean fuzz fuzz-run fuzz-replay soak e2e

all: $(LEADERD_TARGET)

$(BUILD)/lib/%.o: lib/%.c lib/*.h | $(STATIC_DEP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/cmd/%.o: cmd/leaderd/%.c lib/*.h | $(STATIC_DEP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/leaderd: $(BUILD)/cmd/main.o $(LIB_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

# Renamed into place, so a leaderd still running keeps its old binary.
# The daemon with the test-only clock hook (daemon.c, LEADERD_TEST_HOOKS),
# for the clock fault tests.  Never installed or shipped.
$(BUILD)/leaderd-testhooks: cmd/leaderd/main.c $(LIB_SRCS) lib/*.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DLEADERD_TEST_HOOKS -o $@ cmd/leaderd/main.c \
		$(LIB_SRCS) $(LDFLAGS) $(PKG_LIBS) -lm

ifeq ($(SANITIZE)$(STATIC),)
leaderd: $(BUILD)/leaderd
	cp $< $@.tmp && mv -f $@.tmp $@
else
leaderd: $(BUILD)/leaderd
	@echo "make: this daemon is $(BUILD)/leaderd; ./leaderd is left as it is"
endif

# Debian packages for the build and the tests.  Quiet and quick when all
# are present already.
DEB_PKGS = build-essential pkg-config libev-dev libcurl4-openssl-dev \
	   ca-certificates \
	   libjansson-dev libyaml-dev libcmocka-dev openssl curl \
	   python3 python3-pytest valgrind
deps:
	@missing=$$(for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "make deps: installing$$(echo $$missing | sed 's/^/ /')"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
			--no-install-recommends $$missing >/dev/null; \
	fi
	@$(PYTHON) -c 'import pytest, yaml, prometheus_client' 2>/dev/null || \
		$(PYTHON) -m pip install -q pytest pyyaml prometheus_client

# Unit tests: one cmocka program per module, linking that module and
# what it needs.
UNIT_TESTS = duration config lease elector http_parse kubeconfig localapi child \
	     metrics \
	     proxy log sock legacy lock
UNIT_BINS  = $(UNIT_TESTS:%=$(BUILD)/test/%_test) $(BUILD)/test/elector_sim

test_deps_duration	= duration
test_deps_config	= config config_yaml config_check duration elector lease \
			  cfgfile
test_deps_lease		= lease
test_deps_legacy	= legacy lease
test_deps_lock		= lock lease legacy clock
test_deps_elector	= elector lease
test_deps_http_parse	= http_parse
test_deps_kubeconfig	= kubeconfig cfgfile
test_deps_localapi	= localapi elector lease duration
test_deps_child		= child clock
test_deps_proxy		= proxy
test_deps_log		=
test_deps_sock		= sock
test_deps_metrics	= metrics
test_deps_elector_sim	= elector lease

.SECONDEXPANSION:
$(BUILD)/test/%: test/unit/%.c $$(addprefix $(BUILD)/lib/,$$(addsuffix .o,$$(test_deps_$$(subst _test,,$$*)) xmalloc log buf)) lib/*.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itest/unit -o $@ $(filter %.c %.o,$^) $(LDFLAGS) \
		$(PKG_LIBS) -lcmocka -lm

# sock_test wraps bind() to swap the socket for a symlink mid-listen.
$(BUILD)/test/sock_test: LDFLAGS += -Wl,--wrap=bind

unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do \
		echo "== $$t"; \
		TEST_DIR=$(CURDIR)/test/unit $$t; \
	done

# Fuzz targets: replayed over their corpora under the normal compiler by
# `make test`; run for real with libFuzzer by `make fuzz`.
FUZZ_TARGETS	 = lease config kubeconfig http_parse legacy
fuzz_deps_lease		= lease xmalloc log
fuzz_deps_legacy	= legacy lease buf xmalloc log
fuzz_deps_config	= config config_yaml config_check duration elector lease xmalloc log \
			  cfgfile
fuzz_deps_kubeconfig	= kubeconfig xmalloc log cfgfile
fuzz_deps_http_parse	= http_parse
FUZZ_SECONDS	?= 60
FUZZ_CC		?= clang

$(BUILD)/fuzz/%_replay: test/fuzz/%_fuzz.c test/fuzz/replay.c test/fuzz/tmpfile.c $$(addprefix $(BUILD)/lib/,$$(addsuffix .o,$$(fuzz_deps_$$*))) test/fuzz/fuzz.h lib/*.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itest/fuzz -o $@ $(filter %.c %.o,$^) $(LDFLAGS) \
		$(PKG_LIBS) -lm

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
fuzz-run:
	@set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(BUILD)/fuzz/run/$$t; \
		deps=""; for m in $$(case $$t in \
		    lease) echo "$(fuzz_deps_lease)";; \
		    config) echo "$(fuzz_deps_config)";; \
		    kubeconfig) echo "$(fuzz_deps_kubeconfig)";; \
		    http_parse) echo "$(fuzz_deps_http_parse)";; \
		    legacy) echo "$(fuzz_deps_legacy)";; esac); do \
			deps="$$deps lib/$$m.c"; done; \
		$(FUZZ_CC) $(FUZZ_FLAGS) -o $(BUILD)/fuzz/$${t}_fuzz \
		    test/fuzz/$${t}_fuzz.c test/fuzz/tmpfile.c $$deps \
		    $(PKG_LIBS) -lm; \
		echo "== fuzz $$t for $(FUZZ_SECONDS)s"; \
		$(BUILD)/fuzz/$${t}_fuzz -max_total_time=$(FUZZ_SECONDS) \
		    -artifact_prefix=$(BUILD)/fuzz/run/$$t/ \
		    $(BUILD)/fuzz/run/$$t test/fuzz/corpus/$$t 2>&1 | \
		    grep -E '^(#[0-9]+.*DONE|Done|==[0-9]+==ERROR|SUMMARY)' || true; \
	done

# The integration suite, and the test kit's own test (test/kit: the test
# API server, the process harness, the fixtures the suites share).
integration: $(LEADERD_TARGET)
	cd test && LEADERD=$(LEADERD_BIN) \
		$(PYTHON) -m pytest -q -x -p no:cacheprovider $(SAN_PYTEST) \
		kit integration
	$(SAN_SCAN)

deploy-test: leaderd
	cd test/deploy && LEADERD=$(CURDIR)/leaderd \
		$(PYTHON) -m pytest -q -p no:cacheprovider .

# The deploy tests check the shipped image (its file set and size, the
# binary in a chroot without /proc), and the end-to-end tests a real
# cluster's view of it, so both run on the plain build only.
# The plain `make test` also runs the fault suite, the hygiene tests
# (valgrind, fd soak) and the sanitizer pass, so CI runs them with the
# README's command.
test: $(LEADERD_TARGET) unit fuzz-replay integration \
	$(if $(SANITIZE),,faults deploy-test e2e hygiene sanitize)

sanitize:
	$(MAKE) --no-print-directory SANITIZE=address,undefined test

# The OCI image, without a docker engine: mkrootfs.sh's file set (what
# the Dockerfile's runtime stage holds) as one layer, in an OCI image
# layout directory and a tarball of it.  image-test checks every digest,
# unpacks it and runs leaderd from it as uid 65532 (test/deploy).
IMAGE_DIR	= $(BUILD)/image
IMAGE_TAR	= $(IMAGE_DIR)/leaderd-$(VERSION).oci.tar
image: $(LEADERD_TARGET)
	rm -rf $(IMAGE_DIR)/rootfs
	sh deploy/image/mkrootfs.sh $(LEADERD_TARGET) $(IMAGE_DIR)/rootfs
	$(PYTHON) deploy/image/oci.py build --tag $(VERSION) \
		$(IMAGE_DIR)/rootfs $(IMAGE_DIR)/oci $(IMAGE_TAR)

image-test: image
	cd test/deploy && LEADERD=$(LEADERD_BIN) \
		LEADERD_IMAGE=$(CURDIR)/$(IMAGE_TAR) \
		$(PYTHON) -m pytest -q -p no:cacheprovider -rs test_image.py
	@echo "image-test: $(IMAGE_TAR): $$(wc -c <$(IMAGE_TAR)) bytes" \
		"(compressed layer, config, manifest, index)"

# Figures, printed: memory, CPU, API request rate, local API latency,
# handover times.  Not part of make test.
bench: leaderd
	$(PYTHON) test/bench/bench.py --leaderd $(CURDIR)/leaderd

demo: $(LEADERD_TARGET)
	$(PYTHON) test/integration/demo.py --leaderd $(LEADERD_BIN)

clean:
	rm -rf $(BUILD) leaderd

-include test/e2e/e2e.mk
-include test/hygiene/hygiene.mk
-include test/faults/faults.mk
