#!/usr/bin/env bash
# make image-test: proves the images hack/image.sh writes. Builds the Fairplay
# image twice (tags A and B, differing only in VERSION, as the cluster test's
# upgrade needs) and the pause image, checks the archives (config equal to what
# the Dockerfile says, the distroless stand-in's users, modes and files), then
# starts a private containerd (its own config, root, state and socket under
# IMAGE_TEST_DIR, never /run/containerd/containerd.sock), imports the three
# archives with `ctr -n k8s.io images import` and runs them with runc:
# `/fairplay version` for each tag, the default ENTRYPOINT+CMD, the image's
# user and WORKDIR on a --read-only root, `/operator --help`, and pause
# stopping on SIGTERM; pause.c's reaping is checked on the host in a PID
# namespace. Stops what it started (by PID) and ends with `N passed, N failed`.
# Settings: IMAGE (default ghcr.io/fairplay/fairplay), TAG_A / TAG_B (default
# test-a / test-b, also their VERSION), IMAGE_TEST_DIR (default
# /tmp/<worktree name>-containerd), IMAGE_TEST_KEEP=1 keeps containerd's
# directory and the imported images.
set -euo pipefail
cd "$(dirname "$0")/.."
trap 'echo "FAIL hack/image-test.sh line $LINENO: unexpected error (exit $?)" >&2' ERR
ROOT=$PWD
IMAGE=${IMAGE:-ghcr.io/fairplay/fairplay}
TAG_A=${TAG_A:-test-a}
TAG_B=${TAG_B:-test-b}
CT=${IMAGE_TEST_DIR:-/tmp/$(basename "$ROOT")-containerd}
SOCK=$CT/containerd.sock
OUT=$ROOT/bin/image
mkdir -p "$OUT"

passed=0 failed=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }
step() { printf '\n==> %s\n' "$*"; }
# check NAME CMD...: one check from a command's exit status; its output is shown on failure.
check() {
  local name=$1 log
  shift
  log=$(mktemp)
  if "$@" >"$log" 2>&1; then ok "$name"; else bad "$name"; sed 's/^/    /' "$log" | tail -20; fi
  rm -f "$log"
}
finish() {
  echo
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

apt_install() {
  local missing=() p i
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "missing ${missing[*]}: apt-get install ${missing[*]}" >&2; return 1
  fi
  echo "installing ${missing[*]} with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  for i in 1 2 3 4 5 6; do
    # DPkg::Lock::Timeout waits while another apt or dpkg holds the lock.
    apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=120 "${missing[@]}" >&2 && return 0
    [ "$i" = 1 ] && apt-get update -qq -o DPkg::Lock::Timeout=120 >&2 || sleep 10
  done
  return 1
}

if ! apt_install jq; then bad "apt-get install jq"; finish; exit 1; fi

step "image config read from the Dockerfile (go test ./hack/ociimage)"
check "hack/ociimage tests: Dockerfile final stage = USER 65532:65532, ENTRYPOINT [/fairplay], CMD [serve], EXPOSE 8080 9090; image.sh runs the Dockerfile's build lines" \
  go test -count=1 ./hack/ociimage

step "build the images"
declare -A archive
build() { # build KEY ARGS...: hack/image.sh with the environment in ARGS, timed
  local key=$1 t0 log
  shift
  log=$(mktemp)
  t0=$(date +%s.%N)
  if env "$@" >"$log" 2>&1; then
    archive[$key]=$(sed -n 's/^wrote *\([^ ]*\) .*/\1/p' "$log")
    ok "build $key: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1fs", b - a }'), $(du -h "${archive[$key]}" | cut -f1) ${archive[$key]#"$ROOT"/}"
  else
    bad "build $key"
    tail -30 "$log" | sed 's/^/    /'
  fi
  rm -f "$log"
}
build a IMAGE="$IMAGE" TAG="$TAG_A" VERSION="$TAG_A" hack/image.sh fairplay "$OUT/fairplay-$TAG_A.tar"
build b IMAGE="$IMAGE" TAG="$TAG_B" VERSION="$TAG_B" hack/image.sh fairplay "$OUT/fairplay-$TAG_B.tar"
build pause hack/image.sh pause "$OUT/pause.tar"
build a-again IMAGE="$IMAGE" TAG="$TAG_A" VERSION="$TAG_A" hack/image.sh fairplay "$OUT/fairplay-$TAG_A.again.tar"
if [ "${#archive[@]}" -ne 4 ]; then finish; exit 1; fi
check "reproducible: building $TAG_A again gives the same bytes" cmp "${archive[a]}" "${archive[a-again]}"
rm -f "${archive[a-again]}"

step "archives"
# blob ARCHIVE DIGEST: a blob's content; manifest ARCHIVE: the first manifest.
blob() { tar -xOf "$1" "blobs/sha256/${2#sha256:}"; }
manifest() { blob "$1" "$(tar -xOf "$1" index.json | jq -r '.manifests[0].digest')"; }
config() { blob "$1" "$(manifest "$1" | jq -r .config.digest)"; }
layer() { blob "$1" "$(manifest "$1" | jq -r ".layers[$2].digest")"; }
a=${archive[a]} b=${archive[b]} p=${archive[pause]}

check "index names $IMAGE:$TAG_A for containerd and OCI (io.containerd.image.name, org.opencontainers.image.ref.name)" \
  test "$(tar -xOf "$a" index.json | jq -r '.manifests[0].annotations | ."io.containerd.image.name" + " " + ."org.opencontainers.image.ref.name"')" = "$IMAGE:$TAG_A $TAG_A"
check "the archive's config is the Dockerfile's (hack/ociimage -print-config)" \
  diff <(config "$a" | jq -S .config) <(bin/ociimage -f Dockerfile -print-config | jq -S .)
check "config: User 65532:65532, Entrypoint [/fairplay], Cmd [serve], ports 8080 9090, linux/$(go env GOARCH)" \
  test "$(config "$a" | jq -c '[.config.User, .config.Entrypoint, .config.Cmd, (.config.ExposedPorts | keys), .os, .architecture]')" = \
  '["65532:65532",["/fairplay"],["serve"],["8080/tcp","9090/tcp"],"linux","'"$(go env GOARCH)"'"]'
check "tags A and B share the base layer and differ in the binaries" \
  test "$(manifest "$a" | jq -r '.layers[0].digest')" = "$(manifest "$b" | jq -r '.layers[0].digest')" -a \
  "$(manifest "$a" | jq -r '.layers[1].digest')" != "$(manifest "$b" | jq -r '.layers[1].digest')"
rootfs=$(mktemp)
layer "$a" 0 | tar -tvzf - >"$rootfs"
expect_entry() { grep -Eq "$1" "$rootfs"; }
check "base: /tmp 1777, /home/nonroot 0700 65532:65532, /root 0700" \
  bash -c 'f=$1; grep -Eq "^drwxrwxrwt 0/0 .* tmp/$" "$f" && grep -Eq "^drwx------ 65532/65532 .* home/nonroot/$" "$f" && grep -Eq "^drwx------ 0/0 .* root/$" "$f"' _ "$rootfs"
passwd=$(layer "$a" 0 | tar -xzOf - etc/passwd) group=$(layer "$a" 0 | tar -xzOf - etc/group)
check "base: passwd and group with root and nonroot 65532" \
  bash -c 'grep -q "^root:x:0:0:" <<<"$1" && grep -q "^nonroot:x:65532:65532:nonroot:/home/nonroot:" <<<"$1" && grep -q "^nonroot:x:65532:" <<<"$2"' \
  _ "$passwd" "$group"
check "base: CA certificates (Debian ca-certificates) and tzdata" \
  bash -c 'f=$1; grep -Eq " etc/ssl/certs/ca-certificates.crt$" "$f" && grep -Eq " etc/nsswitch.conf$" "$f" && grep -Eq " usr/share/zoneinfo/Europe/Berlin$" "$f"' _ "$rootfs"
layer "$a" 1 | tar -tvzf - >"$rootfs"
check "layer: /fairplay 0755 root" expect_entry '^-rwxr-xr-x 0/0 .* fairplay$'
layer "$a" 2 | tar -tvzf - >"$rootfs"
check "layer: /operator 0755 root" expect_entry '^-rwxr-xr-x 0/0 .* operator$'
rm -f "$rootfs"
check "pause: named registry.k8s.io/pause:3.10.2 (and :3.10, :3.6), USER 65535:65535, Entrypoint [/pause]" \
  test "$(tar -xOf "$p" index.json | jq -r '[.manifests[].annotations."io.containerd.image.name"] | join(" ")') $(config "$p" | jq -c '[.config.User, .config.Entrypoint]')" = \
  'registry.k8s.io/pause:3.10.2 registry.k8s.io/pause:3.10 registry.k8s.io/pause:3.6 ["65535:65535",["/pause"]]'

step "pause.c reaps orphans as PID 1 and stops on SIGTERM (on the host, in a new PID namespace)"
pause_bin=$OUT/pause-context/pause
unshare --pid --fork --kill-child "$pause_bin" >/dev/null 2>&1 &
unshare_pid=$!
pause_pid=
trap '[ -n "$pause_pid" ] && kill -KILL "$pause_pid" 2>/dev/null' EXIT
for _ in $(seq 50); do pause_pid=$(pgrep -P "$unshare_pid" || true); [ -n "$pause_pid" ] && break; sleep 0.1; done
if [ -n "$pause_pid" ]; then
  # A shell in pause's PID namespace starts a sleep and exits: the sleep is
  # re-parented to pause, and must be gone (reaped, not a zombie) once it ends.
  nsenter --target "$pause_pid" --pid -- sh -c 'sleep 1 & exit 0'
  sleep 0.3
  adopted=$(ps -o pid= --ppid "$pause_pid" | wc -l || true)
  sleep 1.5
  left=$(ps -o stat= --ppid "$pause_pid" | tr -d ' ' || true)
  if [ "$adopted" -ge 1 ] && [ -z "$left" ]; then ok "pause adopted an orphan and reaped it"
  else bad "pause reaping: adopted $adopted, left '$left' (Z is a zombie)"; fi
  kill -TERM "$pause_pid"
  if timeout 5 tail --pid="$pause_pid" -f /dev/null && wait "$unshare_pid"; then ok "pause exits 0 on SIGTERM"
  else bad "pause did not exit 0 on SIGTERM"; kill -KILL "$pause_pid" 2>/dev/null || true; fi
else
  bad "pause did not start in a PID namespace"
fi
pause_pid=

step "containerd (private: $SOCK)"
if ! apt_install containerd runc; then bad "apt-get install containerd runc"; finish; exit 1; fi
ctr_() { ctr --address "$SOCK" --namespace k8s.io "$@"; }
if [ -s "$CT/containerd.pid" ] && kill -0 "$(cat "$CT/containerd.pid")" 2>/dev/null; then
  echo "a containerd from an earlier run still holds $CT (pid $(cat "$CT/containerd.pid")); stop it first" >&2
  bad "private containerd directory is free"; finish; exit 1
fi
# A fresh directory: unmount what an interrupted run left mounted under it.
awk -v d="$CT/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do umount -l "$m" || true; done
rm -rf "$CT"
mkdir -p "$CT"
cat >"$CT/config.toml" <<EOF
# hack/image-test.sh: a containerd of its own, beside any other on this host.
version = 2
root = "$CT/root"
state = "$CT/state"
# Only ctr talks to it: no CRI plugin (no CNI, no streaming server).
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$CT/opt"
EOF
containerd --config "$CT/config.toml" >"$CT/containerd.log" 2>&1 &
containerd_pid=$!
echo "$containerd_pid" >"$CT/containerd.pid"
cleanup() {
  local id
  for id in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true; ctr_ tasks rm -f "$id" >/dev/null 2>&1 || true; done
  for id in $(ctr_ containers ls -q 2>/dev/null); do ctr_ containers rm "$id" >/dev/null 2>&1 || true; done
  kill "$containerd_pid" 2>/dev/null && wait "$containerd_pid" 2>/dev/null || true
  rm -f "$CT/containerd.pid"
  if [ "${IMAGE_TEST_KEEP:-}" != 1 ]; then
    awk -v d="$CT/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do umount -l "$m" || true; done
    rm -rf "$CT"
  fi
}
trap cleanup EXIT
for _ in $(seq 100); do ctr_ version >/dev/null 2>&1 && break; sleep 0.2; done
check "containerd $(containerd --version | awk '{print $3}') is up on $SOCK" ctr_ version

step "import (ctr -n k8s.io images import)"
for key in a b pause; do
  check "import ${archive[$key]#"$ROOT"/}" ctr_ images import "${archive[$key]}"
done
names=$(ctr_ images ls -q)
for want in "$IMAGE:$TAG_A" "$IMAGE:$TAG_B" registry.k8s.io/pause:3.10.2 registry.k8s.io/pause:3.10 registry.k8s.io/pause:3.6; do
  check "image $want is listed" grep -qx "$want" <<<"$names"
done
check "images are complete and unpacked (ctr images check)" \
  bash -c '"$@" images check | awk "NR > 1 { n++; if (\$0 !~ / complete / || \$NF != \"true\") bad++ } END { exit !(n == 5 && !bad) }"' \
  _ ctr --address "$SOCK" --namespace k8s.io

step "run (runc)"
# runc's state and the I/O FIFOs go under $CT too, not /run/containerd (the
# shims' sockets do go to /run/containerd/s, named by a hash of our socket).
RUN=(ctr --address "$SOCK" --namespace k8s.io run --rm --runc-root "$CT/runc" --fifo-dir "$CT/fifo")
for t in "$TAG_A" "$TAG_B"; do
  out=$(timeout 120 "${RUN[@]}" "$IMAGE:$t" "version-$t" /fairplay version 2>&1 || true)
  if [ "$out" = "$t" ]; then ok "/fairplay version in $IMAGE:$t prints $t"; else bad "/fairplay version in $IMAGE:$t printed '$out'"; fi
done
out=$(timeout 120 "${RUN[@]}" "$IMAGE:$TAG_A" default-cmd 2>&1 || true)
if grep -q "DATABASE_URL" <<<"$out"; then ok "default ENTRYPOINT+CMD runs /fairplay serve (asks for DATABASE_URL)"
else bad "default ENTRYPOINT+CMD: $out"; fi

keys=$CT/keys
mkdir -p "$keys"
chmod 0777 "$keys"
out=$(timeout 120 "${RUN[@]}" --read-only --mount "type=bind,src=$keys,dst=/home/nonroot/keys,options=rbind:rw" \
  "$IMAGE:$TAG_A" readonly-keys /fairplay keys generate --dir keys 2>&1) && status=0 || status=$?
owner=$(stat -c %u:%g "$keys"/* 2>/dev/null | sort -u | tr '\n' ' ')
if [ "$status" = 0 ] && [ "$owner" = "65532:65532 " ]; then
  ok "--read-only root: /fairplay keys generate --dir keys wrote into WORKDIR /home/nonroot as 65532:65532"
else bad "--read-only keys generate: status $status, files owned by '$owner': $out"; fi
out=$(timeout 120 "${RUN[@]}" --read-only "$IMAGE:$TAG_A" readonly-root /fairplay keys generate --dir /home/nonroot/k 2>&1) && status=0 || status=$?
if [ "$status" != 0 ] && grep -qi "read-only file system" <<<"$out"; then ok "--read-only root refuses writes outside mounts"
else bad "--read-only root accepted a write (status $status): $out"; fi

out=$(timeout 120 "${RUN[@]}" "$IMAGE:$TAG_A" operator-help /operator --help 2>&1) && status=0 || status=$?
if [ "$status" = 0 ] && grep -q -- "-leader-elect" <<<"$out"; then ok "/operator --help (exit 0, lists -leader-elect)"
else bad "/operator --help: status $status: $out"; fi

# pause: runs as 65535, stops on SIGTERM with status 0.
timeout 60 "${RUN[@]}" registry.k8s.io/pause:3.10.2 pause >/dev/null 2>&1 &
run_pid=$!
task_pid=
for _ in $(seq 100); do
  task_pid=$(ctr_ tasks ls 2>/dev/null | awk '$1 == "pause" && $3 == "RUNNING" { print $2 }')
  [ -n "$task_pid" ] && break
  sleep 0.1
done
uid=$( [ -n "$task_pid" ] && awk '/^Uid:/ { print $2 }' "/proc/$task_pid/status" || true)
if [ "$uid" = 65535 ]; then ok "pause image runs /pause as 65535"; else bad "pause task: pid '$task_pid', uid '$uid'"; fi
ctr_ tasks kill -s SIGTERM pause >/dev/null 2>&1 || true
if wait "$run_pid"; then ok "pause image stops on SIGTERM with status 0"; else bad "pause image: ctr run exited $?"; fi

finish
