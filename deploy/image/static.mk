# make STATIC=1 -- a static leaderd: one binary, no shared libraries.
#
# Debian's libcurl is built with every protocol and feature and loads
# some thirty libraries (GnuTLS, Kerberos, LDAP, SSH, HTTP/2, IDN, ...)
# that leaderd never uses; they are most of its memory and of the image.
# This build compiles Debian's own curl source (apt-get source, the
# security updates included) with HTTP and HTTPS only, over the same
# OpenSSL 3 that the shared build uses (libssl-dev's static archives),
# and links it, OpenSSL, libev, jansson, libyaml and glibc statically.
# The source is fetched through apt with a private deb-src list under
# $(BUILD); the machine's apt configuration is not touched.
#
#   make STATIC=1                  build/static/leaderd
#   make STATIC=1 integration      the tests, on that binary
#   make STATIC=1 image image-test its image
#
# mbedTLS (Debian's 2.28) was tried first: it cannot verify an IP address
# against a certificate's subjectAltName, which in-cluster access to the
# API server's service IP needs, so it is not offered.

.DEFAULT_GOAL := all

STATIC_DIR	 = $(BUILD)/curl
CURL_SRC	 = $(STATIC_DIR)/src
CURL_PREFIX	 = $(STATIC_DIR)/prefix
CURL_LIB	 = $(CURL_PREFIX)/lib/libcurl.a
STATIC_APT	 = -o Dir::Etc::SourceList=/dev/null \
		   -o Dir::Etc::SourceParts=$(CURDIR)/$(STATIC_DIR)/apt/sources.d \
		   -o Dir::State::Lists=$(CURDIR)/$(STATIC_DIR)/apt/lists \
		   -o Dir::Cache=$(CURDIR)/$(STATIC_DIR)/apt/cache
# What libcurl keeps: HTTP/1.1 and HTTPS over OpenSSL, proxies (HTTP
# and HTTPS, with CONNECT), the threaded resolver, IPv6, basic auth,
# Debian's CA bundle as the default.  Everything else is off.
CURL_CONFIGURE	 = --disable-shared --enable-static --with-openssl \
	--without-mbedtls --without-gnutls --without-libidn2 --without-libpsl \
	--without-nghttp2 --without-brotli --without-zstd --without-zlib \
	--without-librtmp --without-libssh2 --without-libgsasl \
	--without-gssapi --without-hyper --without-quiche --without-ngtcp2 \
	--without-nghttp3 --without-msh3 --disable-ftp --disable-file \
	--disable-ldap --disable-ldaps --disable-rtsp --disable-dict \
	--disable-telnet --disable-tftp --disable-pop3 --disable-imap \
	--disable-smb --disable-smtp --disable-gopher --disable-mqtt \
	--disable-manual --disable-ntlm --disable-ntlm-wb --disable-tls-srp \
	--disable-cookies --disable-alt-svc --disable-hsts --disable-doh \
	--disable-mime --disable-netrc --disable-progress-meter --disable-aws \
	--disable-kerberos-auth --disable-negotiate-auth \
	--disable-unix-sockets --disable-headers-api --disable-websockets \
	--disable-dateparse --disable-libcurl-option \
	--with-ca-bundle=/etc/ssl/certs/ca-certificates.crt \
	--without-ca-path --enable-threaded-resolver

define STATIC_SOURCES
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
endef
export STATIC_SOURCES

# Debian's curl source, unpacked with Debian's patches applied: the
# version of the installed libcurl4-openssl-dev when apt has it.
$(CURL_SRC)/configure:
	@command -v dpkg-source >/dev/null || { echo "make STATIC=1: dpkg-source is missing (apt-get install dpkg-dev)"; exit 1; }
	rm -rf $(STATIC_DIR)/apt $(STATIC_DIR)/fetch $(CURL_SRC)
	mkdir -p $(STATIC_DIR)/apt/sources.d $(STATIC_DIR)/apt/lists/partial \
		$(STATIC_DIR)/apt/cache/archives/partial $(STATIC_DIR)/fetch
	printf '%s\n' "$$STATIC_SOURCES" >$(STATIC_DIR)/apt/sources.d/src.sources
	apt-get -qq $(STATIC_APT) update
	v=$$(dpkg-query -W -f='$${Version}' libcurl4-openssl-dev 2>/dev/null); \
	cd $(STATIC_DIR)/fetch && { [ -n "$$v" ] && \
		apt-get -qq $(STATIC_APT) source "curl=$$v" || \
		apt-get -qq $(STATIC_APT) source curl; }
	mv $(STATIC_DIR)/fetch/curl-*/ $(CURL_SRC)

$(CURL_LIB): $(CURL_SRC)/configure
	rm -rf $(STATIC_DIR)/obj && mkdir -p $(STATIC_DIR)/obj
	cd $(STATIC_DIR)/obj && $(CURDIR)/$(CURL_SRC)/configure -q \
		--prefix=$(CURDIR)/$(CURL_PREFIX) $(CURL_CONFIGURE) \
		CFLAGS="-O2 -ffunction-sections -fdata-sections" >configure.out
	$(MAKE) -s -C $(STATIC_DIR)/obj/lib
	$(MAKE) -s -C $(STATIC_DIR)/obj/lib install
	$(MAKE) -s -C $(STATIC_DIR)/obj/include install
