# syntax=docker/dockerfile:1
#
# leaderd image: build on Debian bookworm, run on scratch.
#
#   docker build -t ghcr.io/leaderd/leaderd:0.1.0 .
#
# The binary is the static build (deploy/image/static.mk): leaderd, curl
# 8.14 over a trimmed Mbed TLS 3.6, libev, jansson, libyaml and musl in
# one file, each built from Debian's source package at a pinned version
# (apt checks their signatures).  The runtime stage is scratch plus the
# file set `make image-rootfs` assembles with deploy/image/mkrootfs.sh:
# the binary, /etc/passwd and /etc/group with nonroot (65532), Debian's
# CA bundle, and /licenses (the licence texts of every component linked
# in, and COMPONENTS, their list with versions).  Why scratch:
#  - a static binary needs no library, loader or shell: every file in the
#    image is one leaderd reads or one its licences ask for;
#  - the file set is exactly mkrootfs.sh's output, so `make image`
#    builds the same image without a docker engine (deploy/image/oci.py)
#    and test/deploy compares the two file sets; this build smoke-tests
#    the file set in a chroot before the runtime stage is assembled.
# For reproducible builds pin the base image by digest (FROM image@sha256:...).

FROM debian:bookworm AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
	build-essential \
	ca-certificates \
	dpkg-dev \
	python3 \
	musl-tools \
	autoconf \
	automake \
	libtool \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Makefile LICENSE ./
COPY cmd/ cmd/
COPY lib/ lib/
COPY deploy/image/ deploy/image/
ARG VERSION=0.1.0
RUN make image-rootfs VERSION="$VERSION" ROOTFS=/rootfs
# Smoke steps: the binary runs, and runs from the assembled file set
# alone, as the unprivileged user of the runtime stage.
RUN /rootfs/leaderd --version \
 && chroot --userspec=65532:65532 /rootfs /leaderd --version

FROM scratch AS leaderd
COPY --from=build /rootfs/ /
USER 65532:65532
# The runtimes' default PATH with "/" added, where the binary is, so that
# `kubectl exec POD -c leaderd -- leaderd status` finds it.
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/
ENTRYPOINT ["/leaderd"]

# One image per peer sidecar leaderd stands in for: the peer's pod spec
# (its args, its env) runs unchanged when only its image is changed to
# TAG-PEER (docs/migrating.md).  `make image` writes the same five.
#   docker build --target classic -t ghcr.io/leaderd/leaderd:0.1.0-classic .
FROM leaderd AS classic
ENTRYPOINT ["/leaderd", "--compat=classic"]

FROM leaderd AS nais
ENTRYPOINT ["/leaderd", "--compat=nais"]

FROM leaderd AS vapor
ENTRYPOINT ["/leaderd", "--compat=vapor"]

FROM leaderd AS await
ENTRYPOINT ["/leaderd", "--compat=await"]

# The default target: leaderd's own image.
FROM leaderd
