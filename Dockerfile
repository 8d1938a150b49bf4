# syntax=docker/dockerfile:1
#
# leaderd image: build on Debian bookworm, run on scratch.
#
#   docker build -t ghcr.io/leaderd/leaderd:0.1.0 .
#   docker buildx build --platform linux/amd64,linux/arm64 -t ... --push .
#
# Runtime base: scratch, plus the file set deploy/image/mkrootfs.sh
# assembles in the build stage: the binary, the exact shared objects
# `ldd leaderd` lists (the glibc loader included), /etc/passwd and
# /etc/group with nonroot (65532), and Debian's CA bundle.  Why scratch:
#  - distroless base/cc would bring their own glibc and OpenSSL next to
#    the builder's copies of libcurl & co.; here every file in the image
#    comes from one place, the build stage, and matches the binary;
#  - no shell, no package manager, nothing leaderd does not load (the
#    tzdata and /tmp of distroless/static are not used by leaderd);
#  - the file set is exactly mkrootfs.sh's output, so `make image`
#    builds the same image without a docker engine (deploy/image/oci.py)
#    and test/deploy compares the two file sets; this build smoke-tests
#    the file set in a chroot before the runtime stage is assembled.
# debian:bookworm-slim with apt-installed runtime libraries would work
# too, but ships a shell and apt, and is several times larger.
# For reproducible builds pin both images by digest (FROM image@sha256:...).

FROM debian:bookworm AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
	build-essential \
	pkg-config \
	libev-dev \
	libcurl4-openssl-dev \
	libjansson-dev \
	libyaml-dev \
	ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Makefile ./
COPY cmd/ cmd/
COPY lib/ lib/
COPY deploy/image/mkrootfs.sh deploy/image/
ARG VERSION=0.1.0
RUN make leaderd VERSION="$VERSION"
# Smoke steps: the binary runs, and runs from the assembled file set
# alone, as the unprivileged user of the runtime stage.
RUN ./leaderd --version \
 && sh deploy/image/mkrootfs.sh ./leaderd /rootfs \
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
