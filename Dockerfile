# syntax=docker/dockerfile:1
#
# leaderd image: build on Debian bookworm, run on distroless.
#
#   docker build -t ghcr.io/leaderd/leaderd:0.1.0 .
#   docker buildx build --platform linux/amd64,linux/arm64 -t ... --push .
#
# Runtime base: gcr.io/distroless/static-debian12:nonroot, plus the exact
# shared objects `ldd leaderd` lists, the glibc loader included, copied
# from the build stage by deploy/image/mkrootfs.sh.  Why this one:
#  - distroless base/cc would bring their own glibc and OpenSSL next to
#    the builder's copies of libcurl & co.; with static every library in
#    the image comes from one place, the build stage, and matches the
#    binary exactly;
#  - no shell, no package manager, nothing leaderd does not load;
#    static still gives /etc/passwd with nonroot (65532), CA
#    certificates, tzdata and /tmp;
#  - the file set is checkable without a docker engine: test/deploy runs
#    the same script and starts the binary from its output (chroot), and
#    this build does the same before the runtime stage is assembled.
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

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /rootfs/ /
USER 65532:65532
ENTRYPOINT ["/leaderd"]
