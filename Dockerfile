# fifobridge container image.
#
#   docker build -t fifobridge:local .                compile from source (needs the golang image)
#   docker build --target local -t fifobridge:local -f Dockerfile DIR
#                                                     package a static binary DIR/fifobridge built
#                                                     on the host (DIR holds nothing else);
#                                                     pulls no image at all
#
# Stages, in the order the legacy builder needs (a --target stops there):
#   base   the final image's settings, without the binary
#   local  base plus a host-built binary from the build context
#   build  compiles the binary from source
#   image  the default: base plus the compiled binary
#
# Flags come from FIFOBRIDGE_* variables (docker run -e FIFOBRIDGE_MODE=exec),
# since the arguments of docker run are the child's command line.

ARG GO_VERSION=1.26

FROM scratch AS base
LABEL org.opencontainers.image.title="fifobridge" \
      org.opencontainers.image.description="Container init that bridges named pipes to a supervised command-line child"
# The binary is /usr/local/bin/fifobridge, on the usual PATH (set here, not
# left to the engine's default), so that "docker exec CONTAINER fifobridge
# health" works, and a child program found in any usual directory of an
# image built FROM this one.
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    FIFOBRIDGE_DIR=/run/fifobridge \
    FIFOBRIDGE_STOP_TIMEOUT=8s
VOLUME ["/run/fifobridge"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["/usr/local/bin/fifobridge", "health"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/fifobridge", "run", "--"]

# The legacy builder builds every stage before its target, so this one must
# also succeed on the repository (where it is thrown away): it copies the
# whole context, which for this target is a directory holding only the
# fifobridge binary.
FROM base AS local
COPY . /usr/local/bin/

FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/fifobridge ./cmd/fifobridge

FROM base AS image
COPY --from=build /out/fifobridge /usr/local/bin/fifobridge
