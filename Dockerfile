# The tiercache sidecar image: a static binary (CGO_ENABLED=0) on a minimal
# base, run as a non-root user, with the socket and the data directory in
# volumes. Build: `docker build -t tiercache .` (or buildah/podman).
#
# The runtime must allow io_uring (deploy/seccomp/tiercache.json; default
# seccomp profiles of Docker >= 25 and containerd >= 2.0 block it), and the
# warm tier's NUMA binding needs CAP_SYS_NICE: see docs/DEPLOY.md.
#
# BUILDER_IMAGE and BASE_IMAGE let a machine without a registry build it
# from local images (scripts/test.d/60-deploy builds it with a builder made
# from the host's Go toolchain and BASE_IMAGE=scratch).
ARG BUILDER_IMAGE=golang:1.26-bookworm
ARG BASE_IMAGE=gcr.io/distroless/static-debian12:nonroot

FROM ${BUILDER_IMAGE} AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOFLAGS=-mod=mod
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/usr/local/bin/tiercache ./cmd/tiercache \
 && mkdir -p /out/run/tiercache /out/var/lib/tiercache \
 && chown 65532:65532 /out/run/tiercache /out/var/lib/tiercache

FROM ${BASE_IMAGE}
COPY --from=build /out/usr/local/bin/tiercache /usr/local/bin/tiercache
COPY --from=build --chown=65532:65532 /out/run/tiercache /run/tiercache
COPY --from=build --chown=65532:65532 /out/var/lib/tiercache /var/lib/tiercache
# 65532 is distroless's "nonroot"; scratch has no passwd file, and
# tiercache needs none (a numeric server.socket_group needs no lookup).
USER 65532:65532
ENV TIERCACHE_SERVER_SOCKET=/run/tiercache/tiercache.sock \
    TIERCACHE_COLD_DATA_DIR=/var/lib/tiercache
VOLUME ["/run/tiercache", "/var/lib/tiercache"]
# Docker's health: ready means loaded (INFO loading:0); Kubernetes uses
# its own probes (deploy/kubernetes), and OCI-format builds drop this.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5m CMD ["/usr/local/bin/tiercache", "probe", "ready"]
ENTRYPOINT ["/usr/local/bin/tiercache"]
CMD ["serve"]
