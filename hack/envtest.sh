#!/usr/bin/env bash
# Prepares the envtest control plane for the operator's tests and prints the
# directory to use as KUBEBUILDER_ASSETS (and nothing else on stdout):
#
#   KUBEBUILDER_ASSETS=$(hack/envtest.sh) go test ./internal/controller/...
#
# kube-apiserver is built from source through the Go module proxy by
# hack/kube-bins.sh (no prebuilt binaries are downloaded; ~8 min on two cores
# the first time, then cached under ${XDG_CACHE_HOME:-~/.cache}/fairplay/kube,
# so a fresh clone on the same machine (CI) reuses it); bin/envtest holds a
# copy while its version stamp matches.
# etcd comes from Debian's etcd-server package (/usr/bin/etcd), installed here
# with apt-get when missing and we are root.
set -euo pipefail
cd "$(dirname "$0")/.."

KUBE_VERSION=${KUBE_VERSION:-1.36.3}
ASSETS="$PWD/bin/envtest"
STAMP="$ASSETS/.version"
WANT="kube-apiserver v$KUBE_VERSION $(go env GOVERSION)"

log() { echo "envtest: $*" >&2; }

mkdir -p "$ASSETS"

# etcd: Debian's package (3.4.x works with kube-apiserver's etcd3 client).
command -v etcd >/dev/null || hack/apt.sh etcd-server:/usr/bin/etcd
etcd_bin=$(command -v etcd || echo /usr/bin/etcd)
ln -sf "$etcd_bin" "$ASSETS/etcd"

if [ -x "$ASSETS/kube-apiserver" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$WANT" ]; then
  echo "$ASSETS"
  exit 0
fi
# hack/kube-bins.sh builds it once from the Go module proxy (or finds it in
# its cache, shared with the one-node cluster of hack/cluster.sh).
bins=$(KUBE_VERSION=$KUBE_VERSION hack/kube-bins.sh kube-apiserver)
cp -f "$bins/kube-apiserver" "$ASSETS/kube-apiserver"
echo "$WANT" >"$STAMP"
log "kube-apiserver ready in $ASSETS"
echo "$ASSETS"
