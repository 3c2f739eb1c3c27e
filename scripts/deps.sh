#!/usr/bin/env bash
# Installs what a make target needs, from Debian, and nothing when it is already there.
# Usage: scripts/deps.sh build|test|bench
set -euo pipefail

build_pkgs=(build-essential cmake ninja-build pkg-config libssl-dev libre2-dev libcli11-dev
  libfmt-dev libsimdjson-dev nlohmann-json3-dev zlib1g-dev libzookeeper-mt-dev libgtest-dev
  libgmock-dev ca-certificates)
# python3-venv: scripts/python-deps.sh makes a virtual environment where python3 belongs to apt.
test_pkgs=(clang clang-format libclang-rt-14-dev nginx ruby ruby-curb zookeeper openssl
  chromium maven openjdk-17-jdk-headless netcat-openbsd python3-venv python3-pip)
bench_pkgs=(libbenchmark-dev wrk apache2-utils nghttp2-client hey libcurl4-openssl-dev nginx
  ruby ruby-curb time gawk)

case "${1:-build}" in
  build) want=("${build_pkgs[@]}") ;;
  test) want=("${build_pkgs[@]}" "${test_pkgs[@]}") ;;
  bench) want=("${build_pkgs[@]}" "${bench_pkgs[@]}") ;;
  *) echo "usage: $0 build|test|bench" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
