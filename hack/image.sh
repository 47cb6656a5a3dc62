#!/usr/bin/env bash
# make image: builds the container images without docker, as OCI image layout
# tarballs that `ctr -n k8s.io images import` loads.
#
#   hack/image.sh [fairplay] [OUT]   the Fairplay image, from the Dockerfile's own stages:
#                                    web (npm ci; npm run build, skipped while web/dist is
#                                    fresh), build (the Dockerfile's `go build` lines,
#                                    CGO_ENABLED=0, Go's build cache) and the final stage
#                                    read by hack/ociimage (base stand-in, COPY layers, and
#                                    USER/ENTRYPOINT/CMD/EXPOSE/LABEL from the Dockerfile)
#   hack/image.sh pause [OUT]        the pod sandbox image: hack/pause/pause.c, gcc -static,
#                                    hack/pause/Dockerfile
#
# Settings (environment):
#   IMAGE       repository of the Fairplay image (default ghcr.io/fairplay/fairplay, the chart's)
#   TAG         its tag (default VERSION)
#   VERSION     baked into the binaries, -X main.version (default git describe, as make build)
#   PAUSE_IMAGE the pause image's name (default registry.k8s.io/pause:3.10.2, what Kubernetes
#               1.36 ships); PAUSE_ALIASES more names for the same image (default
#               registry.k8s.io/pause:3.10 and registry.k8s.io/pause:3.6, containerd 1.6's
#               default sandbox_image), so any of these sandbox_image settings finds it
#   ARCH        GOARCH / image architecture (default go env GOARCH)
#   EXTRA_MIGRATION  .sql files (space-separated) added to the embedded migrations (a build
#               overlay; the real-node suite's release B and its broken release)
# OUT defaults to bin/image/fairplay-TAG.tar or bin/image/pause-TAG.tar. A second
# tag is cheap: `VERSION=v2 TAG=v2 hack/image.sh` relinks the binaries (compiles come from
# Go's cache), reuses web/dist and writes the identical base layer.
# Output is reproducible: sorted entries, numeric owners, mtimes from
# SOURCE_DATE_EPOCH (default: the commit time).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

kind=fairplay
case "${1:-}" in fairplay | pause) kind=$1 && shift ;; esac
[ $# -le 1 ] || { echo "usage: $0 [fairplay|pause] [OUT]" >&2; exit 2; }

VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
ARCH=${ARCH:-$(go env GOARCH)}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
WORK=$ROOT/bin/image
mkdir -p "$WORK"
t0=$(date +%s.%N)

log() { echo "image: $*" >&2; }
elapsed() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1fs", b - a }'; }

# apt_install PKG...: installs missing Debian packages, waiting while another
# apt or dpkg holds the lock.
apt_install() {
  local missing=() p i
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    log "missing ${missing[*]}: apt-get install ${missing[*]}"; exit 1
  fi
  log "installing ${missing[*]} with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  for i in 1 2 3 4 5 6; do
    apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=120 "${missing[@]}" >&2 && return 0
    [ "$i" = 1 ] && apt-get update -qq -o DPkg::Lock::Timeout=120 >&2 || sleep 10
  done
  log "apt-get install ${missing[*]} failed"; exit 1
}

# The image writer (hack/ociimage), rebuilt only when its sources change.
go build -o "$ROOT/bin/ociimage" ./hack/ociimage

case $kind in
fairplay)
  IMAGE=${IMAGE:-ghcr.io/fairplay/fairplay}
  TAG=${TAG:-$VERSION}
  OUT=${1:-$WORK/fairplay-$TAG.tar}
  apt_install ca-certificates

  # --- web stage: npm ci && npm run build, unless web/dist is what these sources build.
  # The stamp holds a hash of the inputs (the web/ context minus what .dockerignore
  # drops, and e2e/, which the build never reads) and of the dist it produced.
  tree_hash() { (cd "$1" && shift && find . "$@" -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum) | sha256sum | cut -c1-64; }
  web_inputs() { tree_hash web \( -path ./node_modules -o -path ./dist -o -path ./test-results -o -path ./playwright-report -o -path ./e2e \) -prune -o; }
  stamp=$WORK/web.stamp
  if [ -f web/dist/index.html ] && [ "$(cat "$stamp" 2>/dev/null)" = "$(web_inputs) $(tree_hash web/dist)" ]; then
    log "web/dist is fresh"
  else
    log "building the web app (hack/web.sh build)"
    hack/web.sh build >&2
    echo "$(web_inputs) $(tree_hash web/dist)" >"$stamp"
  fi

  # --- build stage: the Dockerfile's go build lines; /out is $stage/out. One
  # directory per VERSION, so rebuilding a version already built links nothing.
  stage=$WORK/stage-$VERSION
  mkdir -p "$stage/out"
  log "go build $VERSION (linux/$ARCH)"
  export CGO_ENABLED=0 GOOS=linux GOARCH=$ARCH
  # EXTRA_MIGRATION="FILE..." adds migrations to the embedded set through a
  # build overlay (the sources stay as they are): the real-node suite's
  # release B (an expand-only migration) and its release whose migration fails.
  if [ -n "${EXTRA_MIGRATION:-}" ]; then
    read -r -a extra <<<"$EXTRA_MIGRATION"
    {
      printf '{"Replace": {'
      sep=
      for f in "${extra[@]}"; do
        [ -r "$f" ] || { log "EXTRA_MIGRATION: no such file $f"; exit 2; }
        printf '%s"%s": "%s"' "$sep" "$ROOT/internal/postgres/migrations/$(basename "$f")" "$(realpath "$f")"
        sep=", "
      done
      printf '}}\n'
    } >"$stage/overlay.json"
    export GOFLAGS="${GOFLAGS:-} -overlay=$stage/overlay.json"
    log "with the extra migrations ${extra[*]}"
  fi
  go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o "$stage/out/fairplay" ./cmd/fairplay
  go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o "$stage/out/operator" ./cmd/operator
  unset GOOS GOARCH
  [ -z "${EXTRA_MIGRATION:-}" ] || export GOFLAGS="${GOFLAGS% -overlay=*}"

  # --- final stage: read from the Dockerfile.
  bin/ociimage -f Dockerfile -context . -stage build="$stage" -build-arg VERSION="$VERSION" \
    -platform "linux/$ARCH" -name "$IMAGE:$TAG" -o "$OUT"
  ;;
pause)
  PAUSE_IMAGE=${PAUSE_IMAGE:-registry.k8s.io/pause:3.10.2}
  PAUSE_ALIASES=${PAUSE_ALIASES-registry.k8s.io/pause:3.10 registry.k8s.io/pause:3.6}
  pause_tag=${PAUSE_IMAGE##*:}
  OUT=${1:-$WORK/pause-$pause_tag.tar}
  apt_install gcc libc6-dev
  ctx=$WORK/pause-context
  mkdir -p "$ctx"
  cc=${CC:-gcc}
  [ "$ARCH" = "$(go env GOHOSTARCH)" ] || { log "pause: cross-compiling C for $ARCH is not set up (set CC)"; [ -n "${CC:-}" ] || exit 1; }
  "$cc" -static -Os -s -Wall -Wextra -Werror -DVERSION="\"$pause_tag\"" -o "$ctx/pause" hack/pause/pause.c
  names=(-name "$PAUSE_IMAGE")
  for n in $PAUSE_ALIASES; do names+=(-name "$n"); done
  bin/ociimage -f hack/pause/Dockerfile -context "$ctx" -platform "linux/$ARCH" "${names[@]}" -o "$OUT"
  ;;
esac

log "$kind image in $(elapsed): $OUT ($(du -h "$OUT" | cut -f1))"
