#!/usr/bin/env bash
# make test-cluster: Fairplay on a real one-node Kubernetes cluster.
#   1. starts the node (hack/cluster.sh up: control plane, containerd,
#      kubelet, kube-proxy, CNI bridge; Postgres and Redis for the pods),
#   2. builds the image from the Dockerfile's stages (hack/image.sh) under
#      three tags — the install, the upgrade, and one whose migration fails —
#      plus the pause image, and imports them into the node's containerd,
#   3. runs the Go suite test/cluster (README's Helm commands, upgrades under
#      load, failed migration, key rotation, drift, uninstall),
#   4. stops everything it started (FAIRPLAY_CLUSTER_KEEP=1 keeps the node).
# FAIRPLAY_CLUSTER_SHORT=1 is the short form `make test` runs: install, play,
# upgrade under load, uninstall.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH=$ROOT/bin:$PATH
mkdir -p .data/test
start=$(date +%s)

hack/tools.sh helm gotestsum >&2

cleanup() {
  if [ -z "${FAIRPLAY_CLUSTER_KEEP:-}" ]; then hack/cluster.sh down || true; fi
}
trap cleanup EXIT

eval "$(hack/cluster.sh up)"
echo "cluster: node up after $(($(date +%s) - start))s"

# Images: one build of the binaries, three tags. B carries one extra,
# expand-only migration, so A -> B is an upgrade across a migration and B -> A
# a rollback across one; the broken tag carries it and one more that fails, so
# its migration Job fails the way a bad release's would.
images=.data/cluster/images
mkdir -p "$images"
run=$(date +%s)
export FAIRPLAY_CLUSTER_TAG_A=cluster-a-$run FAIRPLAY_CLUSTER_TAG_B=cluster-b-$run FAIRPLAY_CLUSTER_TAG_BROKEN=cluster-broken-$run
IMAGE=ghcr.io/fairplay/fairplay TAG=$FAIRPLAY_CLUSTER_TAG_A VERSION=$FAIRPLAY_CLUSTER_TAG_A hack/image.sh fairplay "$images/a.tar"
IMAGE=ghcr.io/fairplay/fairplay TAG=$FAIRPLAY_CLUSTER_TAG_B VERSION=$FAIRPLAY_CLUSTER_TAG_B \
  EXTRA_MIGRATION=hack/testdata/99990_cluster_expand.sql hack/image.sh fairplay "$images/b.tar"
if [ -z "${FAIRPLAY_CLUSTER_SHORT:-}" ]; then
  IMAGE=ghcr.io/fairplay/fairplay TAG=$FAIRPLAY_CLUSTER_TAG_BROKEN VERSION=$FAIRPLAY_CLUSTER_TAG_BROKEN \
    EXTRA_MIGRATION="hack/testdata/99990_cluster_expand.sql hack/testdata/99999_fails.sql" hack/image.sh fairplay "$images/broken.tar"
fi
hack/image.sh pause "$images/pause.tar"
for f in pause a b broken; do
  [ -f "$images/$f.tar" ] || continue
  ctr --address "$FAIRPLAY_CLUSTER_CONTAINERD" -n k8s.io images import "$images/$f.tar" >/dev/null
  rm -f "$images/$f.tar"
done
rm -rf bin/image/stage-cluster-*
ctr --address "$FAIRPLAY_CLUSTER_CONTAINERD" -n k8s.io images ls -q | grep -E 'fairplay|pause' >&2
echo "cluster: images ready after $(($(date +%s) - start))s"

status=0
gotestsum --format standard-verbose --jsonfile .data/test/go-cluster.json -- \
  -tags cluster -count=1 -timeout 45m ./test/cluster/ || status=1
echo "cluster: suite done after $(($(date +%s) - start))s (status $status)"
exit $status
