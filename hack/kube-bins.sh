#!/usr/bin/env bash
# Builds Kubernetes binaries from source through the Go module proxy (no
# prebuilt binaries are downloaded) and prints the directory holding them
# (nothing else on stdout):
#
#   hack/kube-bins.sh kube-apiserver                   # envtest
#   hack/kube-bins.sh kube-apiserver kubelet ...       # the one-node cluster
#
# A throw-away module requires k8s.io/kubernetes and replaces every k8s.io
# staging module by its published v0.x release, the list generated from
# k8s.io/kubernetes's own go.mod. All the binaries asked for are built in one
# `go build` pass (they share most packages). Each binary is kept in
# ${XDG_CACHE_HOME:-~/.cache}/fairplay/kube/v<version>-<go version>/, so a
# fresh clone on the same machine (CI) reuses it; the first build of the
# control plane and node binaries takes ~12 min on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."

KUBE_VERSION=${KUBE_VERSION:-1.36.3}
STAGING_VERSION=v0.${KUBE_VERSION#*.}
GOVER=$(go env GOVERSION)
CACHE=${FAIRPLAY_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fairplay/kube/v$KUBE_VERSION-$GOVER}
[ $# -gt 0 ] || set -- kube-apiserver

log() { echo "kube-bins: $*" >&2; }

missing=()
for b in "$@"; do
  case $b in
  kube-apiserver | kube-controller-manager | kube-scheduler | kube-proxy | kubelet | kubectl) ;;
  *) log "unknown binary $b"; exit 2 ;;
  esac
  [ -x "$CACHE/$b" ] || missing+=("$b")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "$CACHE"
  exit 0
fi

log "building ${missing[*]} v$KUBE_VERSION from the Go module proxy (once; several minutes)"
mkdir -p "$CACHE"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(
  cd "$work"
  export GOFLAGS=-mod=mod GOWORK=off
  go mod init fairplay.local/kubebins >/dev/null 2>&1
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
  pkgs=()
  {
    echo '//go:build tools'
    echo
    echo 'package tools'
    echo
    for b in "${missing[@]}"; do
      if [ "$b" = kubectl ]; then pkg=k8s.io/kubectl/pkg/cmd; else pkg=k8s.io/kubernetes/cmd/$b; fi
      echo "import _ \"$pkg\""
    done
  } >tools.go
  go mod tidy -e >&2 2>&1 || true
  for b in "${missing[@]}"; do
    if [ "$b" = kubectl ]; then pkgs+=(k8s.io/kubernetes/cmd/kubectl); else pkgs+=("k8s.io/kubernetes/cmd/$b"); fi
  done
  mkdir -p out
  # -ldflags stamp the version the binaries report (kubelet registers it as
  # the node's kubeletVersion; the API server's /version answers it).
  ver="-X k8s.io/component-base/version.gitVersion=v$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=${KUBE_VERSION%%.*} -X k8s.io/component-base/version.gitMinor=$(echo "$KUBE_VERSION" | cut -d. -f2)"
  ver="$ver -X k8s.io/client-go/pkg/version.gitVersion=v$KUBE_VERSION"
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ver" -o out/ "${pkgs[@]}" >&2
  for b in "${missing[@]}"; do
    cp -f "out/$b" "$CACHE/$b.tmp" && mv -f "$CACHE/$b.tmp" "$CACHE/$b"
  done
)
log "ready in $CACHE: $*"
echo "$CACHE"
