#!/usr/bin/env bash
# Installs the pinned Go tools the build needs into ./bin, reusing what is there.
# Usage: hack/tools.sh TOOL... (names from the table below; "all" for every one).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$PWD/bin"
mkdir -p "$BIN"

declare -A PKG=(
  [buf]=github.com/bufbuild/buf/cmd/buf@v1.73.0
  [protoc-gen-go]=google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
  [protoc-gen-connect-go]=connectrpc.com/connect/cmd/protoc-gen-connect-go@v1.21.1
  [controller-gen]=sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0
  [helm]=helm.sh/helm/v3/cmd/helm@v3.22.0
  [golangci-lint]=github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
  [gotestsum]=gotest.tools/gotestsum@v1.13.0
  [k6]=go.k6.io/k6@v1.8.1
)

tools=("$@")
if [ "${#tools[@]}" -eq 0 ] || [ "${tools[0]}" = all ]; then tools=("${!PKG[@]}"); fi
for t in "${tools[@]}"; do
  pkg=${PKG[$t]:?unknown tool $t}
  ver=${pkg##*@}
  stamp="$BIN/.$t.version"
  if [ -x "$BIN/$t" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$ver" ]; then continue; fi
  echo "installing $t $ver" >&2
  GOBIN="$BIN" GOFLAGS=-mod=mod go install "$pkg"
  echo "$ver" >"$stamp"
done
