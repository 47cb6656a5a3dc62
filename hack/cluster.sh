#!/usr/bin/env bash
# A real one-node Kubernetes cluster for the project's tests: etcd, the
# control plane, containerd + runc, kubelet, kube-proxy and a CNI bridge, all
# inside one network namespace this script creates, plus a Postgres and a
# Redis for the pods on the host side of its veth (host processes; no
# database images).
#
#   hack/cluster.sh up        start it (idempotent) and print the env to use
#   hack/cluster.sh env       print KUBECONFIG, FAIRPLAY_CLUSTER_* exports
#   hack/cluster.sh down      stop everything `up` started (by PID), remove
#                             the namespace, its routes and mounts
#   hack/cluster.sh status    what runs
#
# Addresses (nothing listens on a host address outside this namespace's veth
# and loopback):
#   node (netns side of the veth)  172.31.213.2   API server :6443, kubelet
#   host side of the veth          172.31.213.1   Postgres :5432, Redis :6379
#   pods                           10.244.0.0/24  bridge cni0 in the node netns
#   services                       10.96.0.0/16   the host routes it to the node
#
# Binaries: kube-apiserver, kube-controller-manager, kube-scheduler, kubelet,
# kube-proxy and kubectl from hack/kube-bins.sh (built once from the Go module
# proxy, cached under ~/.cache); etcd, containerd, runc, the CNI plugins,
# iptables and conntrack from Debian (installed here when missing).
#
# The machine is cgroup v1 only: the kubelet runs with failCgroupV1: false and
# the cgroupfs driver; containerd's CRI restricts oom_score_adj (no
# CAP_SYS_RESOURCE in the sandbox). Images are imported (hack/image.sh) and
# never pulled: image GC is off and pods use imagePullPolicy Never.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DIR=${FAIRPLAY_CLUSTER_DIR:-$ROOT/.data/cluster}
NS=fairplay-node
NODE=fairplay-node
HOST_IP=172.31.213.1
NODE_IP=172.31.213.2
POD_CIDR=10.244.0.0/24
SVC_CIDR=10.96.0.0/16
API_SVC_IP=10.96.0.1
ETCD_PORT=23790
PG_PORT=5432
REDIS_PORT=6379
RUN=/run/fairplay-node
SOCK=$RUN/containerd.sock
PAUSE_IMAGE=${FAIRPLAY_PAUSE_IMAGE:-registry.k8s.io/pause:3.10.2}

log() { echo "cluster: $*" >&2; }
die() { log "$*"; exit 1; }
innet() { nsenter --net=/run/netns/$NS "$@"; }

[ "$(id -u)" = 0 ] || die "needs root (network namespace, containerd, kubelet)"

install_debian() {
  local etcd=etcd-server:/usr/bin/etcd
  command -v etcd >/dev/null && etcd=
  hack/apt.sh containerd:containerd runc:runc containernetworking-plugins:/usr/lib/cni/bridge $etcd \
    iptables:iptables conntrack:conntrack openssl:openssl util-linux:nsenter iproute2:ip >&2
}

pgbin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

# pid files: $DIR/pids/<name>.pid
running() { local f="$DIR/pids/$1.pid"; [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; }

# start NAME CMD...: runs CMD in the node's network namespace, logging to
# $DIR/logs/NAME.log, unless it already runs.
start() {
  local name=$1
  shift
  if running "$name"; then return 0; fi
  mkdir -p "$DIR/logs" "$DIR/pids"
  setsid nsenter --net=/run/netns/$NS "$@" >>"$DIR/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$DIR/pids/$name.pid"
}

# put FILE: writes stdin to FILE unless FILE already holds it (kube-proxy
# exits when its configuration file changes, even to the same bytes).
put() {
  local tmp
  tmp=$(mktemp "$1.XXXXXX")
  cat >"$tmp"
  if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv -f "$tmp" "$1"; fi
}

wait_for() { # wait_for WHAT SECONDS CMD...
  local what=$1 secs=$2
  shift 2
  local i
  for ((i = 0; i < secs * 2; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  die "$what did not come up in ${secs}s (logs: $DIR/logs)"
}

# One node per machine: the namespace, addresses and routes are fixed. The
# directory that started it owns it; another checkout is told to stop it.
claim() {
  mkdir -p "$RUN"
  local owner
  owner=$(cat "$RUN/owner" 2>/dev/null || true)
  if [ -n "$owner" ] && [ "$owner" != "$DIR" ] && [ -e /run/netns/$NS ]; then
    local f alive=
    for f in "$owner"/pids/*.pid; do
      [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && alive=1
    done
    [ -z "$alive" ] || die "a node started from $owner is running; stop it with: FAIRPLAY_CLUSTER_DIR=$owner $0 down"
    log "taking over the network namespace left by $owner (none of its processes runs)"
    FAIRPLAY_CLUSTER_DIR=$owner "$0" down
  fi
  echo "$DIR" >"$RUN/owner"
}

network_up() {
  if [ ! -e /run/netns/$NS ]; then
    log "network namespace $NS, veth $HOST_IP <-> $NODE_IP"
    ip netns add $NS
    ip link add fpn-host type veth peer name fpn-node
    ip link set fpn-node netns $NS
    ip addr add $HOST_IP/30 dev fpn-host
    ip link set fpn-host up
    innet ip addr add $NODE_IP/30 dev fpn-node
    innet ip link set fpn-node up
    innet ip link set lo up
    innet ip route add default via $HOST_IP
    innet sysctl -qw net.ipv4.ip_forward=1
    # Pod -> Service -> pod on the same bridge needs the bridge to pass
    # frames through iptables (kube-proxy's DNAT undone on the reply).
    innet sysctl -qw net.bridge.bridge-nf-call-iptables=1 2>/dev/null || log "bridge-nf-call-iptables unavailable; kube-proxy masquerades all"
    innet sysctl -qw net.ipv4.conf.all.route_localnet=1
  fi
  ip route replace $SVC_CIDR via $NODE_IP
  ip route replace $POD_CIDR via $NODE_IP
}

pki() {
  local p=$DIR/pki
  [ -s "$p/admin.crt" ] && return 0
  log "certificates in $p"
  mkdir -p "$p"
  (
    cd "$p"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 -subj "/CN=fairplay-node-ca" 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    cert() { # name subject [san]
      openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
      local ext=
      if [ -n "${3:-}" ]; then
        printf 'subjectAltName=%s\n' "$3" >"$1.ext"
        ext="-extfile $1.ext"
      fi
      # shellcheck disable=SC2086
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" -days 3650 $ext 2>/dev/null
      rm -f "$1.csr" "$1.ext"
    }
    cert apiserver "/CN=kube-apiserver" "IP:$API_SVC_IP,IP:$NODE_IP,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost"
    cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
    cert kubelet "/O=system:nodes/CN=system:node:$NODE"
    cert controller-manager "/CN=system:kube-controller-manager"
    cert scheduler "/CN=system:kube-scheduler"
    cert kube-proxy "/CN=system:kube-proxy"
    cert admin "/O=system:masters/CN=fairplay-admin"
    # Postgres serves TLS (the README's URL says sslmode=require).
    cert postgres "/CN=$HOST_IP" "IP:$HOST_IP"
  )
  for who in kubelet controller-manager scheduler kube-proxy admin; do
    cat >"$DIR/$who.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: fairplay-node
  cluster:
    certificate-authority: $p/ca.crt
    server: https://$NODE_IP:6443
users:
- name: $who
  user:
    client-certificate: $p/$who.crt
    client-key: $p/$who.key
contexts:
- name: fairplay-node
  context: {cluster: fairplay-node, user: $who}
current-context: fairplay-node
EOF
  done
}

control_plane() {
  local bins=$1 p=$DIR/pki
  mkdir -p "$DIR/etcd"
  start etcd "$(command -v etcd || echo /usr/bin/etcd)" --data-dir "$DIR/etcd" --name fairplay-node \
    --listen-client-urls http://127.0.0.1:$ETCD_PORT --advertise-client-urls http://127.0.0.1:$ETCD_PORT \
    --listen-peer-urls http://127.0.0.1:$((ETCD_PORT + 1)) --initial-advertise-peer-urls http://127.0.0.1:$((ETCD_PORT + 1)) \
    --initial-cluster fairplay-node=http://127.0.0.1:$((ETCD_PORT + 1)) --quota-backend-bytes 2147483648 \
    --unsafe-no-fsync
  start kube-apiserver "$bins/kube-apiserver" \
    --etcd-servers http://127.0.0.1:$ETCD_PORT \
    --advertise-address $NODE_IP --bind-address 0.0.0.0 --secure-port 6443 \
    --service-cluster-ip-range $SVC_CIDR \
    --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
    --client-ca-file "$p/ca.crt" \
    --kubelet-client-certificate "$p/apiserver-kubelet-client.crt" --kubelet-client-key "$p/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types InternalIP \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --allow-privileged=false --profiling=false --event-ttl 30m
  wait_for kube-apiserver 120 innet "$bins/kubectl" --kubeconfig "$DIR/admin.kubeconfig" get --raw /readyz
  start kube-controller-manager "$bins/kube-controller-manager" \
    --kubeconfig "$DIR/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$DIR/controller-manager.kubeconfig" --authorization-kubeconfig "$DIR/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false \
    --service-account-private-key-file "$p/sa.key" --root-ca-file "$p/ca.crt" \
    --use-service-account-credentials --service-cluster-ip-range $SVC_CIDR \
    --cluster-signing-cert-file "$p/ca.crt" --cluster-signing-key-file "$p/ca.key" \
    --node-monitor-grace-period 40s
  start kube-scheduler "$bins/kube-scheduler" \
    --kubeconfig "$DIR/scheduler.kubeconfig" \
    --authentication-kubeconfig "$DIR/scheduler.kubeconfig" --authorization-kubeconfig "$DIR/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false
}

node() {
  local bins=$1 p=$DIR/pki
  mkdir -p "$DIR/containerd" "$DIR/cni/net.d" "$DIR/cni/ipam" "$RUN" "$DIR/kubelet"
  put "$DIR/cni/net.d/10-fairplay.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "fairplay",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "$DIR/cni/ipam", "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "loopback"}
  ]
}
EOF
  put "$DIR/containerd.toml" <<EOF
version = 2
root = "$DIR/containerd/root"
state = "$RUN/state"
[grpc]
  address = "$SOCK"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # The sandbox has no CAP_SYS_RESOURCE: never lower an oom_score_adj.
  restrict_oom_score_adj = true
  enable_selinux = false
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    discard_unpacked_layers = false
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$DIR/cni/net.d"
EOF
  start containerd containerd --config "$DIR/containerd.toml"
  wait_for containerd 60 ctr --address "$SOCK" version

  put "$DIR/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# This machine has cgroup v1 only.
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$SOCK
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $p/ca.crt}
authorization: {mode: Webhook}
failSwapOn: false
# Images are imported, never pulled: never collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", nodefs.inodesFree: "1%", imagefs.available: "1%"}
resolvConf: /etc/resolv.conf
serializeImagePulls: false
maxPods: 60
# Secrets reach mounted volumes within about this period.
syncFrequency: 20s
protectKernelDefaults: false
rotateCertificates: false
serverTLSBootstrap: false
EOF
  start kubelet "$bins/kubelet" --config "$DIR/kubelet.yaml" --kubeconfig "$DIR/kubelet.kubeconfig" \
    --root-dir "$DIR/kubelet" --cert-dir "$DIR/kubelet/pki" --hostname-override $NODE --node-ip $NODE_IP

  put "$DIR/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clusterCIDR: $POD_CIDR
hostnameOverride: $NODE
bindAddress: $NODE_IP
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
clientConnection: {kubeconfig: $DIR/kube-proxy.kubeconfig}
conntrack: {maxPerCore: 0}
iptables: {masqueradeAll: true}
EOF
  start kube-proxy "$bins/kube-proxy" --config "$DIR/kube-proxy.yaml"
}

databases() {
  local bin
  bin=$(pgbin)
  [ -n "$bin" ] || die "PostgreSQL server binaries not found (apt-get install postgresql)"
  if [ ! -s "$DIR/pg/PG_VERSION" ]; then
    log "initialising Postgres in $DIR/pg"
    mkdir -p "$DIR/pg"
    chown postgres "$DIR/pg" 2>/dev/null || true
    chmod 700 "$DIR/pg"
    su postgres -s /bin/sh -c "$bin/initdb -D '$DIR/pg' -U postgres --auth-local=trust --auth-host=scram-sha-256 >/dev/null" ||
      die "initdb failed"
    cat >>"$DIR/pg/pg_hba.conf" <<EOF
host all all $NODE_IP/32 scram-sha-256
host all all $POD_CIDR scram-sha-256
EOF
  fi
  if [ ! -s "$DIR/pg/server.key" ]; then
    cp "$DIR/pki/postgres.crt" "$DIR/pg/server.crt"
    cp "$DIR/pki/postgres.key" "$DIR/pg/server.key"
    chown postgres "$DIR/pg/server.crt" "$DIR/pg/server.key" 2>/dev/null || true
    chmod 600 "$DIR/pg/server.key"
  fi
  if ! running postgres; then
    mkdir -p "$DIR/logs" "$DIR/pids" "$DIR/pgsock"
    chown postgres "$DIR/logs" "$DIR/pgsock" 2>/dev/null || true
    touch "$DIR/logs/postgres.log" && chown postgres "$DIR/logs/postgres.log"
    setsid su postgres -s /bin/sh -c "exec $bin/postgres -D '$DIR/pg' -c listen_addresses=$HOST_IP -p $PG_PORT -c unix_socket_directories='$DIR/pgsock' -c max_connections=200 -c fsync=off -c ssl=on" \
      >>"$DIR/logs/postgres.log" 2>&1 </dev/null &
    echo $! >"$DIR/pids/postgres.pid"
  fi
  wait_for postgres 60 "$bin/pg_isready" -q -h "$DIR/pgsock" -p $PG_PORT
  local pw
  pw=$(cat "$DIR/pg.password" 2>/dev/null || true)
  if [ -z "$pw" ]; then
    pw=$(openssl rand -hex 16)
    "$bin/psql" -q -h "$DIR/pgsock" -p $PG_PORT -U postgres -c "create role fairplay login password '$pw'" -c "create database fairplay owner fairplay" >/dev/null
    echo "$pw" >"$DIR/pg.password"
  fi
  [ -s "$DIR/redis.password" ] || openssl rand -hex 16 >"$DIR/redis.password"
  if ! running redis; then
    setsid redis-server --bind $HOST_IP --port $REDIS_PORT --save "" --appendonly no --requirepass "$(cat "$DIR/redis.password")" \
      >>"$DIR/logs/redis.log" 2>&1 </dev/null &
    echo $! >"$DIR/pids/redis.pid"
  fi
  wait_for redis 30 env REDISCLI_AUTH="$(cat "$DIR/redis.password")" redis-cli -h $HOST_IP -p $REDIS_PORT ping
}

env_out() {
  local bins
  bins=$(hack/kube-bins.sh kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubelet kubectl)
  cat <<EOF
export KUBECONFIG=$DIR/admin.kubeconfig
export FAIRPLAY_CLUSTER_DIR=$DIR
export FAIRPLAY_CLUSTER_BIN=$bins
export FAIRPLAY_CLUSTER_NODE_IP=$NODE_IP
export FAIRPLAY_CLUSTER_HOST_IP=$HOST_IP
export FAIRPLAY_CLUSTER_CONTAINERD=$SOCK
export FAIRPLAY_CLUSTER_DATABASE_URL='postgres://fairplay:$(cat "$DIR/pg.password" 2>/dev/null)@$HOST_IP:$PG_PORT/fairplay?sslmode=require'
export FAIRPLAY_CLUSTER_DATABASE_ADMIN_URL='postgres://postgres@/fairplay?host=$DIR/pgsock&port=$PG_PORT'
export FAIRPLAY_CLUSTER_REDIS_URL='redis://:$(cat "$DIR/redis.password" 2>/dev/null)@$HOST_IP:$REDIS_PORT/0'
EOF
}

up() {
  install_debian
  local bins
  bins=$(hack/kube-bins.sh kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubelet kubectl)
  mkdir -p "$DIR"
  claim
  network_up
  pki
  databases
  control_plane "$bins"
  node "$bins"
  log "waiting for node $NODE to be Ready"
  local i
  for ((i = 0; i < 240; i++)); do
    if [ "$(innet "$bins/kubectl" --kubeconfig "$DIR/admin.kubeconfig" get node $NODE -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]; then
      log "node $NODE is Ready"
      env_out
      return 0
    fi
    sleep 0.5
  done
  die "node $NODE not Ready in 120s (logs: $DIR/logs)"
}

down() {
  local name pid owner
  owner=$(cat "$RUN/owner" 2>/dev/null || true)
  if [ -n "$owner" ] && [ "$owner" != "$DIR" ]; then
    die "the node was started from $owner; stop it with: FAIRPLAY_CLUSTER_DIR=$owner $0 down"
  fi
  for name in kube-proxy kubelet kube-scheduler kube-controller-manager kube-apiserver etcd redis postgres; do
    if running "$name"; then
      pid=$(cat "$DIR/pids/$name.pid")
      log "stopping $name ($pid)"
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$DIR/pids/$name.pid"
  done
  # Pods: stop every sandbox through containerd, then containerd itself (its
  # shims are in their own sessions: kill those that belong to our root).
  if running containerd; then
    if command -v ctr >/dev/null; then
      for t in $(ctr --address "$SOCK" -n k8s.io tasks ls -q 2>/dev/null); do
        ctr --address "$SOCK" -n k8s.io tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true
      done
    fi
    pid=$(cat "$DIR/pids/containerd.pid")
    log "stopping containerd ($pid)"
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$DIR/pids/containerd.pid"
  # containerd-shim processes of this node (their command line names our
  # socket's directory).
  for pid in $(pgrep -f "containerd-shim.*-address $SOCK" 2>/dev/null || true); do kill -KILL "$pid" 2>/dev/null || true; done
  # Mounts under the cluster's directories and the pods' network namespaces.
  awk '{print $2}' /proc/mounts | grep -E "^($DIR|$RUN)/" | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  for n in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^cni-' || true); do
    # Only pod namespaces made by this node's containerd: they live under
    # /run/netns and are empty of processes once the shims are gone.
    [ -z "$(ip netns pids "$n" 2>/dev/null)" ] && ip netns del "$n" 2>/dev/null || true
  done
  ip route del $SVC_CIDR via $NODE_IP 2>/dev/null || true
  ip route del $POD_CIDR via $NODE_IP 2>/dev/null || true
  if [ -e /run/netns/$NS ]; then
    ip link del fpn-host 2>/dev/null || true
    ip netns del $NS 2>/dev/null || true
  fi
  # kubelet cgroups of this node's pods.
  for c in /sys/fs/cgroup/*/kubepods; do
    [ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  rm -f "$RUN/owner"
  log "down"
}

status() {
  local name
  for name in etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy postgres redis; do
    if running "$name"; then echo "$name: running ($(cat "$DIR/pids/$name.pid"))"; else echo "$name: stopped"; fi
  done
}

case ${1:-} in
up) up ;;
down) down ;;
env) env_out ;;
status) status ;;
*) echo "usage: $0 up|down|env|status" >&2; exit 2 ;;
esac
