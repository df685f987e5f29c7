# syntax=docker/dockerfile:1
# The CleanAds image: one static binary on an empty base, run as a non-root
# user, everything it keeps in the volume /data.
#   docker build --build-arg VERSION="$(git describe --tags --always --dirty)" -t cleanads .
#   docker run --rm -it -v cleanads-data:/data cleanads init --listen 0.0.0.0:8080
#   docker run -d -p 127.0.0.1:8080:8080 -v cleanads-data:/data cleanads

FROM golang:1.26-bookworm AS build
# The golang images set GOTOOLCHAIN=local; auto has go fetch the toolchain
# go.mod names (from the module proxy, with the modules), the one with no
# known vulnerability, instead of building with the image's own.
ENV GOTOOLCHAIN=auto
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The build context has no .git (.dockerignore), so the version is given here
# and stamped into the build info that `cleanads version` prints.
ARG VERSION=""
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X github.com/cleanads/cleanads/internal/buildinfo.stamped=${VERSION}" \
      -o /out/cleanads ./cmd/cleanads \
 && mkdir -p /out/data \
 && echo 'cleanads:x:10001:10001:CleanAds:/data:/sbin/nologin' > /out/passwd \
 && echo 'cleanads:x:10001:' > /out/group

FROM scratch
# Meta's Graph API and ACME are reached over TLS: the CA roots.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/passwd /etc/passwd
COPY --from=build /out/group /etc/group
COPY --from=build /out/cleanads /usr/local/bin/cleanads
COPY --from=build --chown=10001:10001 /out/data /data
USER 10001:10001
WORKDIR /data
VOLUME /data
# The config init writes in the volume; in a container the server listens on
# every address of its own network namespace.
ENV CLEANADS_CONFIG=/data/cleanads.yaml \
    CLEANADS_LISTEN=0.0.0.0:8080
# 8080 behind a proxy; 80 and 443 with tls: (publish those instead).
EXPOSE 8080 80 443
# No curl in the image: the binary probes its own /readyz, where the config
# says it listens (8080, or port 80's plain side once tls: is set).
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["/usr/local/bin/cleanads", "probe"]
ENTRYPOINT ["/usr/local/bin/cleanads"]
CMD ["serve"]
