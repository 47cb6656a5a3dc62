# syntax=docker/dockerfile:1.7
# One image, two binaries: /fairplay (the server, with the web app embedded;
# the default entrypoint, `serve` by default) and /operator (the Kubernetes
# operator; run it with `command: [/operator]`). Multi-arch builds work with
# `docker buildx build --platform linux/amd64,linux/arm64`: the Node and Go
# stages run on the build platform and Go cross-compiles.
#
#   docker build -t ghcr.io/fairplay/fairplay:v0.1.0 --build-arg VERSION=v0.1.0 .

ARG NODE_VERSION=20
ARG GO_VERSION=1.26

# --- web app: web/dist ------------------------------------------------------
FROM --platform=$BUILDPLATFORM node:${NODE_VERSION}-bookworm-slim AS web
WORKDIR /src/web
COPY web/package.json web/package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY web/ ./
RUN npm run build

# --- Go binaries --------------------------------------------------------------
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# The built app replaces the placeholder web/dist that //go:embed reads.
COPY --from=web /src/web/dist ./web/dist
ENV CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH}
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/fairplay ./cmd/fairplay && \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/operator ./cmd/operator

# --- runtime: static, non-root, no shell ---------------------------------------
FROM gcr.io/distroless/static-debian12:nonroot
LABEL org.opencontainers.image.title="fairplay" \
      org.opencontainers.image.description="Fairplay play-money casino server and Kubernetes operator" \
      org.opencontainers.image.source="https://github.com/fairplay/fairplay"
COPY --from=build /out/fairplay /fairplay
COPY --from=build /out/operator /operator
USER 65532:65532
# 8080: the app (FAIRPLAY_HTTP_ADDR); 9090: /metrics, for the scraper only (FAIRPLAY_METRICS_ADDR).
EXPOSE 8080 9090
ENTRYPOINT ["/fairplay"]
CMD ["serve"]
