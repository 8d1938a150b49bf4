# make STATIC=1 -- a static leaderd: one binary, no shared libraries.
# It is what the image ships (make image, the Dockerfile).
#
# Debian's libcurl is built with every protocol and feature and loads
# some thirty libraries (GnuTLS, Kerberos, LDAP, SSH, HTTP/2, IDN, ...)
# that leaderd never uses, and OpenSSL 3's default provider links every
# algorithm it has: together they are most of leaderd's memory.  This
# build compiles, from Debian's own source packages:
#   - Mbed TLS 3.6, trimmed to a TLS 1.2 and 1.3 client with
#     ECDHE, RSA and ECDSA, AES-GCM and ChaCha20-Poly1305 (MBEDTLS_UNSET);
#     from forky (Debian testing), whose 3.6.7 is the newest 3.6 LTS
#     release the archive has: trixie's 3.6.6 cannot do TLS 1.2 with an
#     RSA server (it offers RSA-PSS, then refuses it) and misses 3.6.7's
#     security fixes.  3.6.8's client-side fix is carried as a patch
#     (deploy/image/patches: each says why);
#     3.6 is the first long-term branch that checks an IP address against
#     a certificate's subjectAltName (in-cluster, the API server is
#     reached at its service IP);
#   - curl 8.14 (trixie), HTTP and HTTPS only, over that Mbed TLS: its
#     Mbed TLS backend speaks TLS 1.3 (curl 7.88's, bookworm's, only 1.2;
#     docs/building.md says why this matters);
# and libev, jansson and libyaml (bookworm), and links them all and the
# C library statically.  LIBC=musl builds everything with musl-gcc
# instead of glibc's cc.
#
# The sources come through apt with a private deb-src list under
# $(STATIC_ROOT)/apt (the machine's apt configuration is not touched):
# apt checks the Release files' signatures with Debian's archive keyring
# and every file's hash against the signed Sources index.  The versions
# are pinned below; when the mirror drops one (a security update
# replaces it), the fetch fails and names the package to bump.  The
# deploy tests (test/deploy/test_pins.py) fail when a pin falls behind a
# newer version of its Debian release (a security or point-release
# update) that the archive serves.
#
#   make STATIC=1                  build/static/leaderd
#   make STATIC=1 LIBC=musl        build/static/musl/leaderd
#   make STATIC=1 LIBC=musl STATIC_ARCH=arm64
#                                  build/static/arm64/musl/leaderd
#   make STATIC=1 integration      the tests, on that binary
#
# Build cost, once per build directory (2 cores): the sources ~10 s,
# all the libraries ~2 min (~3 with musl for arm64); they are kept under
# $(BUILD)/third and rebuilt only when a pin, a patch or the options
# they are built with change (the *.cfg stamps).

.DEFAULT_GOAL := all

# Pinned source versions (apt-get source NAME=VERSION).  Mbed TLS is
# forky's: testing replaces a version within days of a new upload, and
# the fetch then fails and asks for the bump (drop the patches that the
# new version makes redundant: each names the release that fixes it).
MBEDTLS_DEB	 = 3.6.7-3
CURL_DEB	 = 8.14.1-2+deb13u5
JANSSON_DEB	 = 2.14-2
YAML_DEB	 = 0.2.5-1
LIBEV_DEB	 = 1:4.33-1
MUSL_DEB	 = 1.2.3-1

# Newer versions of a pin's Debian release that the archive lists but
# whose files its mirror does not serve (404), so that the pin cannot
# move yet: NAME=VERSION.  test_pins.py fails on any other newer
# version, and on one of these as soon as the mirror serves it.
PINS_UNSERVED	 = curl=8.14.1-2+deb13u7

SRC_DIR		 = $(STATIC_ROOT)/src
THIRD		 = $(BUILD)/third

# The compiler.  STATIC_ARCH=arm64 on an amd64 host cross-compiles with
# Debian's gcc-aarch64-linux-gnu: for musl, with a musl built here from
# Debian's source by that compiler (Debian has no arm64 musl-gcc on
# amd64).  Natively, musl-gcc is musl-tools' wrapper.
ifneq ($(STATIC_ARCH),$(HOST_ARCH))
ifneq ($(STATIC_ARCH)-$(HOST_ARCH),arm64-amd64)
$(error make STATIC=1 STATIC_ARCH=$(STATIC_ARCH): only arm64 is cross-built, from amd64)
endif
HOST		 = aarch64-linux-gnu
AR		 = $(HOST)-ar
STRIP		 = $(HOST)-strip
endif
ifeq ($(LIBC),musl)
ifneq ($(HOST),)
MUSL_DIR	 = $(THIRD)/musl
MUSL_GCC	 = $(MUSL_DIR)/bin/musl-gcc
CC		 = $(CURDIR)/$(MUSL_GCC)
else
MUSL_GCC	 =
CC		 = musl-gcc
endif
else
CC		 = $(if $(HOST),$(HOST)-gcc,cc)
endif
PREFIX_DIR	 = $(THIRD)/prefix
CURL_LIB	 = $(PREFIX_DIR)/lib/libcurl.a
MBEDTLS_LIBS	 = $(PREFIX_DIR)/lib/libmbedtls.a \
		   $(PREFIX_DIR)/lib/libmbedx509.a \
		   $(PREFIX_DIR)/lib/libmbedcrypto.a
STATIC_APT	 = -o Dir::Etc::SourceList=/dev/null \
		   -o Dir::Etc::SourceParts=$(CURDIR)/$(STATIC_ROOT)/apt/sources.d \
		   -o Dir::State::Lists=$(CURDIR)/$(STATIC_ROOT)/apt/lists \
		   -o Dir::Cache=$(CURDIR)/$(STATIC_ROOT)/apt/cache
# This file, named in messages.
STATIC_MK	 = deploy/image/static.mk

# What Mbed TLS keeps: a TLS 1.2 and 1.3 client (ECDHE key exchange,
# RSA and ECDSA certificates, P-256, P-384 and X25519, AES-GCM and
# ChaCha20-Poly1305, SHA-2), X.509 and PEM parsing (kubeconfig data in
# memory), the PSA crypto core that TLS 1.3 runs on, and its error
# strings (they reach leaderd's log when a handshake fails).  Off: the
# server side, DTLS, TLS 1.3 PSK and early data, session caches and
# tickets, renegotiation, static RSA and DH key exchanges, the other
# ciphers, curves and hashes, key and certificate writing, the self tests.
MBEDTLS_UNSET	 = MBEDTLS_SSL_SRV_C MBEDTLS_SSL_PROTO_DTLS \
	MBEDTLS_SSL_DTLS_ANTI_REPLAY MBEDTLS_SSL_DTLS_HELLO_VERIFY \
	MBEDTLS_SSL_DTLS_CLIENT_PORT_REUSE MBEDTLS_SSL_DTLS_CONNECTION_ID \
	MBEDTLS_SSL_DTLS_CONNECTION_ID_COMPAT \
	MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_PSK_ENABLED \
	MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_PSK_EPHEMERAL_ENABLED \
	MBEDTLS_SSL_EARLY_DATA MBEDTLS_SSL_RECORD_SIZE_LIMIT \
	MBEDTLS_SSL_CACHE_C MBEDTLS_SSL_TICKET_C MBEDTLS_SSL_COOKIE_C \
	MBEDTLS_SSL_SESSION_TICKETS MBEDTLS_SSL_CONTEXT_SERIALIZATION \
	MBEDTLS_SSL_RENEGOTIATION MBEDTLS_SSL_ALPN \
	MBEDTLS_SSL_MAX_FRAGMENT_LENGTH MBEDTLS_SSL_KEYING_MATERIAL_EXPORT \
	MBEDTLS_SSL_ALL_ALERT_MESSAGES \
	MBEDTLS_KEY_EXCHANGE_PSK_ENABLED MBEDTLS_KEY_EXCHANGE_DHE_PSK_ENABLED \
	MBEDTLS_KEY_EXCHANGE_ECDHE_PSK_ENABLED \
	MBEDTLS_KEY_EXCHANGE_RSA_PSK_ENABLED MBEDTLS_KEY_EXCHANGE_RSA_ENABLED \
	MBEDTLS_KEY_EXCHANGE_DHE_RSA_ENABLED \
	MBEDTLS_KEY_EXCHANGE_ECDH_ECDSA_ENABLED \
	MBEDTLS_KEY_EXCHANGE_ECDH_RSA_ENABLED \
	MBEDTLS_CAMELLIA_C MBEDTLS_ARIA_C MBEDTLS_DES_C MBEDTLS_CCM_C \
	MBEDTLS_CMAC_C MBEDTLS_DHM_C MBEDTLS_ECJPAKE_C MBEDTLS_LMS_C \
	MBEDTLS_PKCS7_C MBEDTLS_PKCS12_C MBEDTLS_PKCS5_C MBEDTLS_RIPEMD160_C \
	MBEDTLS_SHA3_C MBEDTLS_SHA224_C MBEDTLS_MD5_C MBEDTLS_NIST_KW_C \
	MBEDTLS_TIMING_C MBEDTLS_PADLOCK_C MBEDTLS_NET_C \
	MBEDTLS_X509_CRL_PARSE_C \
	MBEDTLS_X509_CSR_PARSE_C MBEDTLS_X509_CSR_WRITE_C \
	MBEDTLS_X509_CRT_WRITE_C MBEDTLS_X509_CREATE_C MBEDTLS_PEM_WRITE_C \
	MBEDTLS_SELF_TEST MBEDTLS_VERSION_FEATURES MBEDTLS_DEBUG_C \
	MBEDTLS_ECP_DP_SECP192R1_ENABLED MBEDTLS_ECP_DP_SECP224R1_ENABLED \
	MBEDTLS_ECP_DP_SECP521R1_ENABLED MBEDTLS_ECP_DP_SECP192K1_ENABLED \
	MBEDTLS_ECP_DP_SECP224K1_ENABLED MBEDTLS_ECP_DP_SECP256K1_ENABLED \
	MBEDTLS_ECP_DP_BP256R1_ENABLED MBEDTLS_ECP_DP_BP384R1_ENABLED \
	MBEDTLS_ECP_DP_BP512R1_ENABLED MBEDTLS_ECP_DP_CURVE448_ENABLED \
	MBEDTLS_PSA_CRYPTO_STORAGE_C MBEDTLS_PSA_ITS_FILE_C \
	MBEDTLS_PK_PARSE_EC_COMPRESSED MBEDTLS_PK_RSA_ALT_SUPPORT \
	MBEDTLS_GENPRIME \
	MBEDTLS_CIPHER_MODE_CFB MBEDTLS_CIPHER_MODE_OFB \
	MBEDTLS_CIPHER_MODE_XTS MBEDTLS_CIPHER_PADDING_ONE_AND_ZEROS \
	MBEDTLS_CIPHER_PADDING_ZEROS_AND_LEN MBEDTLS_CIPHER_PADDING_ZEROS
# curl 8's backend calls psa_crypto_init(), which TLS 1.3 needs, only
# when Mbed TLS is built to use PSA.
MBEDTLS_SET	 = MBEDTLS_USE_PSA_CRYPTO
# Debian's build of 3.6.7 turns off the unaligned-access shortcut
# (3.6.7-3: "buggy"); so does this one.
MBEDTLS_CFLAGS	 = -Os -ffunction-sections -fdata-sections \
		   -DMBEDTLS_ALIGNMENT_DISABLE_EFFICENT_UNALIGNED_ACCESS

# What libcurl keeps: HTTP/1.1 and HTTPS over Mbed TLS, proxies (HTTP
# and HTTPS, with CONNECT, basic auth), the threaded resolver, IPv6,
# Debian's CA bundle as the default.  Everything else is off.
CURL_CONFIGURE	 = --disable-shared --enable-static \
	--with-mbedtls=$(CURDIR)/$(PREFIX_DIR) --without-openssl \
	--without-gnutls --without-wolfssl --without-rustls \
	--without-libidn2 --without-libpsl \
	--without-nghttp2 --without-brotli --without-zstd --without-zlib \
	--without-librtmp --without-libssh2 --without-libssh \
	--without-libgsasl --without-gssapi --without-quiche \
	--without-ngtcp2 --without-nghttp3 --without-msh3 --without-libuv \
	--disable-ftp --disable-file --disable-ipfs \
	--disable-ldap --disable-ldaps --disable-rtsp --disable-dict \
	--disable-telnet --disable-tftp --disable-pop3 --disable-imap \
	--disable-smb --disable-smtp --disable-gopher --disable-mqtt \
	--disable-manual --disable-docs --disable-ntlm --disable-tls-srp \
	--disable-digest-auth --disable-bearer-auth \
	--disable-cookies --disable-alt-svc --disable-hsts --disable-doh \
	--disable-mime --disable-form-api --disable-netrc \
	--disable-progress-meter --disable-aws \
	--disable-kerberos-auth --disable-negotiate-auth \
	--disable-unix-sockets --disable-headers-api --disable-websockets \
	--disable-dateparse --disable-libcurl-option --disable-sha512-256 \
	--disable-httpsrr --disable-ech --disable-ssls-export \
	--disable-bindlocal --disable-get-easy-options \
	--with-ca-bundle=/etc/ssl/certs/ca-certificates.crt \
	--without-ca-path --without-ca-fallback --disable-ca-search \
	--enable-threaded-resolver
CURL_CFLAGS	 = -O2 -ffunction-sections -fdata-sections

# jansson, libyaml and libev, built from their sources into the same
# prefix: with musl they must be (Debian's static archives are built
# against glibc), and with glibc too, so that both builds link the same
# pinned versions, built the same way (-Os, sections for --gc-sections).
DEP_LIBS	 = $(PREFIX_DIR)/lib/libjansson.a $(PREFIX_DIR)/lib/libyaml.a \
		   $(PREFIX_DIR)/lib/libev.a
STATIC_SRCS	 = mbedtls curl jansson libyaml libev $(if $(MUSL_GCC),musl)
DEP_CFLAGS	 = -Os -ffunction-sections -fdata-sections
src_deb_mbedtls	 = $(MBEDTLS_DEB)
src_deb_curl	 = $(CURL_DEB)
src_deb_jansson	 = $(JANSSON_DEB)
src_deb_libyaml	 = $(YAML_DEB)
src_deb_libev	 = $(LIBEV_DEB)
src_deb_musl	 = $(MUSL_DEB)

define STATIC_SOURCES
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates trixie trixie-updates forky
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security trixie-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
endef
export STATIC_SOURCES

# Stamps that change only when what they record changes, so that an
# edit of this file rebuilds only what it touches: $(call stamp,FILE,TEXT)
# rewrites FILE when TEXT differs from what it holds (paths relative to
# the tree, so that a copy of the tree keeps its builds).
.PHONY: FORCE
stamp = mkdir -p $(dir $(1)) && \
	printf '%s\n' '$(subst $(CURDIR)/,,$(2))' >$(1).new && \
	{ cmp -s $(1).new $(1) && rm -f $(1).new || mv -f $(1).new $(1); }

$(STATIC_ROOT)/apt/sources.d/src.sources: FORCE
	@mkdir -p $(@D) && printf '%s\n' "$$STATIC_SOURCES" >$@.new && \
	{ cmp -s $@.new $@ && rm -f $@.new || mv -f $@.new $@; }

$(STATIC_ROOT)/apt/updated: $(STATIC_ROOT)/apt/sources.d/src.sources
	@command -v dpkg-source >/dev/null || { echo "make STATIC=1: dpkg-source is missing (make deps)"; exit 1; }
	rm -rf $(STATIC_ROOT)/apt/lists $(STATIC_ROOT)/apt/cache
	mkdir -p $(STATIC_ROOT)/apt/lists/partial \
		$(STATIC_ROOT)/apt/cache/archives/partial
	apt-get -qq $(STATIC_APT) update
	touch $@

# $(SRC_DIR)/NAME: Debian's source of NAME at its pinned version,
# unpacked with Debian's patches applied; NAME.version says which, and
# is rewritten (the source fetched again) only when the pin changes.
$(SRC_DIR)/%.version: FORCE | $(STATIC_ROOT)/apt/updated
	@[ "$$(cat $@ 2>/dev/null)" = "$(src_deb_$*)" ] || { set -e; \
	echo "make STATIC=1: fetching the source of $*=$(src_deb_$*)"; \
	rm -rf $@ $(SRC_DIR)/$* $(SRC_DIR)/fetch-$*; \
	mkdir -p $(SRC_DIR)/fetch-$*; \
	(cd $(SRC_DIR)/fetch-$* && apt-get -qq $(STATIC_APT) source \
		"$*=$(src_deb_$*)" 2>&1 | grep -v 'unsandboxed' || true); \
	ls -d $(SRC_DIR)/fetch-$*/*/ >/dev/null 2>&1 || { echo "make" \
		"STATIC=1: no source of $*=$(src_deb_$*) on the mirror; bump" \
		"its pin in $(STATIC_MK) (apt-cache $(STATIC_APT) showsrc" \
		"$*), or remove $(STATIC_ROOT)/apt to read the mirror's" \
		"lists again"; exit 1; }; \
	mv $(SRC_DIR)/fetch-$*/*/ $(SRC_DIR)/$*; \
	rm -rf $(SRC_DIR)/fetch-$*; \
	echo "$(src_deb_$*)" >$@; }

# What each build below depends on besides its source: its compiler,
# flags and options.
$(THIRD)/mbedtls.cfg: FORCE
	@$(call stamp,$@,$(CC) $(AR) $(MBEDTLS_CFLAGS) unset $(MBEDTLS_UNSET) set $(MBEDTLS_SET))
$(THIRD)/curl.cfg: FORCE
	@$(call stamp,$@,$(CC) $(HOST) $(CURL_CFLAGS) $(CURL_CONFIGURE))
$(THIRD)/deps.cfg: FORCE
	@$(call stamp,$@,$(CC) $(HOST) $(DEP_CFLAGS))
$(THIRD)/musl.cfg: FORCE
	@$(call stamp,$@,$(HOST))
$(THIRD)/licenses.cfg: FORCE
	@$(call stamp,$@,$(VERSION) $(LIBC_NAME) $(LIBC_TEXTS))

# Mbed TLS: the library's own Makefile, in a copy of the source whose
# mbedtls_config.h is trimmed by its own scripts/config.py, with our
# patches (deploy/image/patches: each says why) applied.
MBEDTLS_PATCHES	 = $(sort $(wildcard deploy/image/patches/mbedtls-*.patch))
$(MBEDTLS_LIBS) &: $(SRC_DIR)/mbedtls.version $(THIRD)/mbedtls.cfg $(MBEDTLS_PATCHES) $(MUSL_GCC)
	rm -rf $(THIRD)/mbedtls && mkdir -p $(THIRD) $(PREFIX_DIR)/lib \
		$(PREFIX_DIR)/include
	cp -a $(SRC_DIR)/mbedtls $(THIRD)/mbedtls
	for p in $(MBEDTLS_PATCHES); do \
		patch -s -p1 -d $(THIRD)/mbedtls <$$p || exit 1; done
	cd $(THIRD)/mbedtls && for o in $(MBEDTLS_UNSET); do \
		$(PYTHON) scripts/config.py unset $$o || exit 1; done && \
		for o in $(MBEDTLS_SET); do \
		$(PYTHON) scripts/config.py set $$o || exit 1; done
	$(MAKE) -s -C $(THIRD)/mbedtls/library CC="$(CC)" AR="$(AR)" \
		CFLAGS="$(MBEDTLS_CFLAGS)" \
		libmbedcrypto.a libmbedx509.a libmbedtls.a
	cp -R $(THIRD)/mbedtls/include/mbedtls $(THIRD)/mbedtls/include/psa \
		$(PREFIX_DIR)/include/
	cp $(THIRD)/mbedtls/library/libmbed*.a $(PREFIX_DIR)/lib/

# curl: configure and make in $(THIRD)/curl, from a patched copy of the
# source in $(THIRD)/curl-src; only libcurl.a and the headers are built.
CURL_PATCHES	 = $(sort $(wildcard deploy/image/patches/curl-*.patch))
$(CURL_LIB): $(SRC_DIR)/curl.version $(MBEDTLS_LIBS) $(THIRD)/curl.cfg $(CURL_PATCHES) $(MUSL_GCC)
	rm -rf $(THIRD)/curl $(THIRD)/curl-src && mkdir -p $(THIRD)/curl
	cp -a $(SRC_DIR)/curl $(THIRD)/curl-src
	for p in $(CURL_PATCHES); do \
		patch -s -p1 -d $(THIRD)/curl-src <$$p || exit 1; done
	cd $(THIRD)/curl && $(CURDIR)/$(THIRD)/curl-src/configure -q \
		$(if $(HOST),--host=$(HOST)) \
		--prefix=$(CURDIR)/$(PREFIX_DIR) $(CURL_CONFIGURE) \
		CC="$(CC)" CFLAGS="$(CURL_CFLAGS)" \
		CPPFLAGS="-I$(CURDIR)/$(PREFIX_DIR)/include" \
		LDFLAGS="-L$(CURDIR)/$(PREFIX_DIR)/lib" LIBS=-lpthread \
		>configure.out
	$(MAKE) -s -C $(THIRD)/curl/lib libcurl.la
	$(MAKE) -s -C $(THIRD)/curl/lib install-libLTLIBRARIES
	$(MAKE) -s -C $(THIRD)/curl/include install

# musl for a cross build: its own configure and make, installed with
# its musl-gcc wrapper (which calls $(HOST)-gcc) into $(MUSL_DIR).
ifneq ($(MUSL_GCC),)
$(MUSL_DIR)/bin/musl-gcc: $(SRC_DIR)/musl.version $(THIRD)/musl.cfg
	rm -rf $(THIRD)/musl-obj $(MUSL_DIR) && mkdir -p $(THIRD)/musl-obj
	cd $(THIRD)/musl-obj && $(CURDIR)/$(SRC_DIR)/musl/configure \
		--target=$(HOST) CROSS_COMPILE=$(HOST)- CC=$(HOST)-gcc \
		--prefix=$(CURDIR)/$(MUSL_DIR) --disable-shared \
		--enable-wrapper=gcc >configure.out
	$(MAKE) -s -C $(THIRD)/musl-obj ARCH=aarch64
	$(MAKE) -s -C $(THIRD)/musl-obj ARCH=aarch64 install >/dev/null
endif

# jansson, libyaml and libev: their autotools builds, static only
# (Debian's sources of jansson and libyaml have no configure script:
# autoreconf makes it, as Debian's build does).
$(PREFIX_DIR)/lib/libjansson.a: $(SRC_DIR)/jansson.version $(THIRD)/deps.cfg $(MUSL_GCC)
	$(call autotools_lib,jansson,--disable-shared --enable-static)
$(PREFIX_DIR)/lib/libyaml.a: $(SRC_DIR)/libyaml.version $(THIRD)/deps.cfg $(MUSL_GCC)
	$(call autotools_lib,libyaml,--disable-shared --enable-static)
$(PREFIX_DIR)/lib/libev.a: $(SRC_DIR)/libev.version $(THIRD)/deps.cfg $(MUSL_GCC)
	$(call autotools_lib,libev,--disable-shared --enable-static)

define autotools_lib
	rm -rf $(THIRD)/$(1) && mkdir -p $(THIRD)/$(1)
	cd $(SRC_DIR)/$(1) && { [ -x configure ] || autoreconf -fi >/dev/null; }
	cd $(THIRD)/$(1) && $(CURDIR)/$(SRC_DIR)/$(1)/configure -q \
		$(if $(HOST),--host=$(HOST)) \
		--prefix=$(CURDIR)/$(PREFIX_DIR) $(2) CC="$(CC)" \
		CFLAGS="$(DEP_CFLAGS)" >configure.out
	$(MAKE) -s -C $(THIRD)/$(1) install
endef

STATIC_DEP	 = $(CURL_LIB) $(DEP_LIBS)
STATIC_LINK	 = $(CURL_LIB) $(MBEDTLS_LIBS) $(DEP_LIBS)
# -isystem: these headers are not held to leaderd's warnings (ev.h's
# macros break strict aliasing; the system's copy is exempt as well).
# LEADERD_TLS_MBEDTLS: lib/api/kube_tls.c sets its certificate rules
# through Mbed TLS's calls, not OpenSSL's.
PKG_CFLAGS	:= -isystem $(PREFIX_DIR)/include -DLEADERD_TLS_MBEDTLS
PKG_LIBS	:= $(STATIC_LINK) -lpthread
LDFLAGS		+= -static -Wl,--gc-sections

# The licences of what the binary holds, for the image's /licenses:
# each component's own licence file from the source it was built from,
# the C library's from the build host's package (Debian's copyright
# file; glibc's points at the LGPL, which is added), and COMPONENTS, a
# plain list: name, version, licence.
LICENSES_DIR	 = $(BUILD)/licenses
ifeq ($(LIBC),musl)
LIBC_PKG	 = musl-dev
LIBC_NAME	 = musl
LIBC_LICENSE	 = MIT
LIBC_TEXTS	 = $(if $(MUSL_GCC),$(SRC_DIR)/musl/COPYRIGHT,/usr/share/doc/musl/copyright)
else
LIBC_PKG	 = libc6-dev
LIBC_NAME	 = glibc
LIBC_LICENSE	 = LGPL-2.1-or-later
LIBC_TEXTS	 = /usr/share/doc/libc6/copyright \
		   /usr/share/common-licenses/LGPL-2.1
endif
$(LICENSES_DIR)/COMPONENTS: $(STATIC_SRCS:%=$(SRC_DIR)/%.version) LICENSE $(THIRD)/licenses.cfg
	rm -rf $(LICENSES_DIR) && mkdir -p $(LICENSES_DIR)
	cp LICENSE $(LICENSES_DIR)/leaderd.txt
	cp $(SRC_DIR)/curl/COPYING $(LICENSES_DIR)/curl.txt
	cp $(SRC_DIR)/mbedtls/LICENSE $(LICENSES_DIR)/mbedtls.txt
	cp $(SRC_DIR)/libev/LICENSE $(LICENSES_DIR)/libev.txt
	cp $(SRC_DIR)/jansson/LICENSE $(LICENSES_DIR)/jansson.txt
	cp $(SRC_DIR)/libyaml/License $(LICENSES_DIR)/libyaml.txt
	cat $(LIBC_TEXTS) >$(LICENSES_DIR)/$(LIBC_NAME).txt
	v=$(if $(MUSL_GCC),$(MUSL_DEB),$$(dpkg-query -W -f='$${Version}' \
		$(if $(HOST),$(LIBC_PKG)-$(STATIC_ARCH)-cross,$(LIBC_PKG)))) && \
	printf '%s\n' \
	    "# What /leaderd is built from, statically linked; each" \
	    "# component's licence text is NAME.txt beside this file." \
	    "leaderd $(VERSION) Apache-2.0" \
	    "curl $(CURL_DEB) curl" \
	    "mbedtls $(MBEDTLS_DEB) Apache-2.0" \
	    "libev $(LIBEV_DEB) BSD-2-Clause" \
	    "jansson $(JANSSON_DEB) MIT" \
	    "libyaml $(YAML_DEB) MIT" \
	    "$(LIBC_NAME) $$v $(LIBC_LICENSE)" >$@.tmp
	mv $@.tmp $@
