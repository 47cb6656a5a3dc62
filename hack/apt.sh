#!/usr/bin/env bash
# Installs the Debian packages named on the command line that are missing, in
# one apt-get run, and nothing else:
#
#   hack/apt.sh chromium:/usr/bin/chromium etcd-server:etcd redis-server
#
# Each argument is a package, optionally with ":<check>": a command name, or an
# absolute path that must be executable; without a check the package is
# looked up in dpkg's database. As root it runs apt-get itself, otherwise
# through sudo; where neither works it says what to install and fails. Every
# script that needs a system package (services, envtest, e2e, cluster, the
# test summary) calls this, so `make run` and `make test` install what they
# need on a fresh machine and .ci/run is not the only place that installs.
set -euo pipefail

missing=()
for arg in "$@"; do
  pkg=${arg%%:*}
  check=${arg#*:}
  [ "$check" = "$arg" ] && check=
  case $check in
  "") dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' && continue ;;
  /*) [ -x "$check" ] && continue ;;
  *) command -v "$check" >/dev/null 2>&1 && continue ;;
  esac
  missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "missing Debian packages: ${missing[*]} (run: sudo apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi
command -v apt-get >/dev/null 2>&1 || { echo "missing packages: ${missing[*]} (no apt-get on this machine)" >&2; exit 1; }
echo "installing ${missing[*]} with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq >&2
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
