# syntax=docker/dockerfile:1
# The pdpp-mcp server image: a static binary on distroless static, as the
# nonroot user. Stdio by default (docker run -i --rm IMAGE --demo); hosted
# mode with --http 0.0.0.0:8080 (see docs/hosted.md).
# Without a container engine, scripts/release/image-test.sh builds the same
# layout with scripts/release/ociimage, runs what it holds, then runs it in
# podman (scripts/release/podman-test.sh). The release workflow builds this
# file for linux/amd64 and linux/arm64 and pushes it to GHCR.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ARG VERSION=dev
ARG COMMIT=""
ARG DATE=""
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath \
      -ldflags "-s -w -X github.com/pdpp-mcp/pdpp-mcp/internal/version.version=${VERSION} -X github.com/pdpp-mcp/pdpp-mcp/internal/version.commit=${COMMIT} -X github.com/pdpp-mcp/pdpp-mcp/internal/version.date=${DATE}" \
      -o /out/pdpp-mcp ./cmd/pdpp-mcp

FROM gcr.io/distroless/static-debian12:nonroot
LABEL io.modelcontextprotocol.server.name="io.github.pdpp-mcp/pdpp-mcp" \
      org.opencontainers.image.source="https://github.com/pdpp-mcp/pdpp-mcp" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /out/pdpp-mcp /usr/local/bin/pdpp-mcp
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/pdpp-mcp"]
