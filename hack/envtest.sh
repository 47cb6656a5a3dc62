#!/usr/bin/env bash
# Prepares the envtest control plane for the operator's tests and prints the
# directory to use as KUBEBUILDER_ASSETS (and nothing else on stdout):
#
#   KUBEBUILDER_ASSETS=$(hack/envtest.sh) go test ./internal/controller/...
#
# kube-apiserver is built from source through the Go module proxy (no prebuilt
# binaries are downloaded): a throw-away module requires k8s.io/kubernetes and
# replaces every k8s.io staging module by its published v0.x release, the list
# generated from k8s.io/kubernetes's own go.mod. The first build takes ~8 min on
# two cores; later runs reuse bin/envtest while its version stamp matches, and
# a fresh clone on the same machine (CI) reuses the copy kept in
# ${XDG_CACHE_HOME:-~/.cache}/fairplay/envtest.
# etcd comes from Debian's etcd-server package (/usr/bin/etcd), installed here
# with apt-get when missing and we are root.
set -euo pipefail
cd "$(dirname "$0")/.."

KUBE_VERSION=${KUBE_VERSION:-1.36.3}
STAGING_VERSION=v0.${KUBE_VERSION#*.}
ASSETS="$PWD/bin/envtest"
STAMP="$ASSETS/.version"
WANT="kube-apiserver v$KUBE_VERSION $(go env GOVERSION)"
CACHE=${FAIRPLAY_ENVTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fairplay/envtest}

log() { echo "envtest: $*" >&2; }

mkdir -p "$ASSETS"

# etcd: Debian's package (3.4.x works with kube-apiserver's etcd3 client).
if ! command -v etcd >/dev/null && [ ! -x /usr/bin/etcd ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing etcd-server with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends etcd-server >&2
  else
    log "etcd not found: apt-get install etcd-server"; exit 1
  fi
fi
etcd_bin=$(command -v etcd || echo /usr/bin/etcd)
ln -sf "$etcd_bin" "$ASSETS/etcd"

if [ -x "$ASSETS/kube-apiserver" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$WANT" ]; then
  echo "$ASSETS"
  exit 0
fi
if [ -x "$CACHE/kube-apiserver" ] && [ "$(cat "$CACHE/.version" 2>/dev/null)" = "$WANT" ]; then
  log "reusing kube-apiserver from $CACHE"
  cp -f "$CACHE/kube-apiserver" "$ASSETS/kube-apiserver"
  echo "$WANT" >"$STAMP"
  echo "$ASSETS"
  exit 0
fi

log "building kube-apiserver v$KUBE_VERSION from the Go module proxy (once; several minutes)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(
  cd "$work"
  export GOFLAGS=-mod=mod GOWORK=off
  go mod init envtest.local/kubeapiserver >/dev/null 2>&1
  gomod=$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
  [ -f "$gomod" ] || { log "cannot read k8s.io/kubernetes@v$KUBE_VERSION's go.mod"; exit 1; }
  {
    echo "require k8s.io/kubernetes v$KUBE_VERSION"
    echo "replace ("
    # k8s.io/kubernetes replaces each staging module by ./staging/src/...;
    # point each at its published release instead.
    awk '$2 == "=>" && $3 ~ /^\.\/staging\/src\// { print "\t" $1 " => " $1 " '"$STAGING_VERSION"'" }' "$gomod"
    echo ")"
  } >>go.mod
  grep -c '=>' go.mod | sed 's/^/envtest: staging replaces: /' >&2
  cat >tools.go <<'EOF'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
EOF
  go mod tidy -e >&2 2>&1 || true
  CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$ASSETS/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver >&2
)
echo "$WANT" >"$STAMP"
if mkdir -p "$CACHE" 2>/dev/null && cp -f "$ASSETS/kube-apiserver" "$CACHE/kube-apiserver.tmp" 2>/dev/null; then
  mv -f "$CACHE/kube-apiserver.tmp" "$CACHE/kube-apiserver"
  echo "$WANT" >"$CACHE/.version"
fi
log "kube-apiserver ready in $ASSETS"
echo "$ASSETS"
