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
SANFLAGS = -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
BUILD	:= $(BUILD)/san
endif

# libev ships no .pc file on Debian; fall back to plain -lev.
PKG_CFLAGS := $(shell pkg-config --cflags $(filter-out libev,$(PKGS)) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(filter-out libev,$(PKGS)) 2>/dev/null) \
	      $(shell pkg-config --libs libev 2>/dev/null || echo -lev)

CFLAGS	?= -O2 -g
CFLAGS	+= -std=c11 -D_GNU_SOURCE $(WARN) $(SANFLAGS) -Ilib $(PKG_CFLAGS) \
	   -DLEADERD_VERSION='"$(VERSION)"'
LDFLAGS	+= $(SANFLAGS)

LIB_SRCS = $(wildcard lib/*.c)
LIB_OBJS = $(LIB_SRCS:lib/%.c=$(BUILD)/lib/%.o)

.PHONY: all deps test unit integration demo clean fuzz soak e2e

all: leaderd

$(BUILD)/lib/%.o: lib/%.c lib/*.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/cmd/%.o: cmd/leaderd/%.c lib/*.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/leaderd: $(BUILD)/cmd/main.o $(LIB_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

leaderd: $(BUILD)/leaderd
	cp $< $@

# Debian packages for the build and the tests.  Quiet and quick when all
# are present already.
DEB_PKGS = build-essential pkg-config libev-dev libcurl4-openssl-dev \
	   libjansson-dev libyaml-dev libcmocka-dev openssl curl \
	   python3 python3-pytest
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
	@$(PYTHON) -c 'import pytest' 2>/dev/null || \
		$(PYTHON) -m pip install -q pytest

# Unit tests: one cmocka program per module, linking that module and
# what it needs.
UNIT_TESTS = duration config lease elector http_parse kubeconfig
UNIT_BINS  = $(UNIT_TESTS:%=$(BUILD)/test/%_test) $(BUILD)/test/elector_sim

test_deps_duration	= duration
test_deps_config	= config config_check duration elector lease
test_deps_lease		= lease xmalloc log
test_deps_elector	= elector lease
test_deps_http_parse	= http_parse
test_deps_kubeconfig	= kubeconfig
test_deps_elector_sim	= elector lease

.SECONDEXPANSION:
$(BUILD)/test/%: test/unit/%.c $$(addprefix $(BUILD)/lib/,$$(addsuffix .o,$$(test_deps_$$(subst _test,,$$*)) xmalloc log buf)) lib/*.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itest/unit -o $@ $(filter %.c %.o,$^) $(LDFLAGS) \
		$(PKG_LIBS) -lcmocka -lm

unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do \
		echo "== $$t"; \
		TEST_DIR=$(CURDIR)/test/unit $$t; \
	done

integration: leaderd
	cd test/integration && LEADERD=$(CURDIR)/leaderd \
		$(PYTHON) -m pytest -q -x -p no:cacheprovider .

test: leaderd unit integration

demo: leaderd
	$(PYTHON) test/integration/demo.py --leaderd $(CURDIR)/leaderd

clean:
	rm -rf $(BUILD) leaderd
