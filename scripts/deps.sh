#!/usr/bin/env bash
# Checks what a make target needs and installs only what is missing, from Debian.
#
#   scripts/deps.sh build     compiler, CMake, Ninja, pkg-config, the runtime libraries' -dev
#                             packages: what `make build` and `make demo` need, nothing more
#   scripts/deps.sh package   build + dpkg-shlibdeps and file, for `make deb`
#   scripts/deps.sh test      package + everything `make test` uses on a bare Debian 12: clang
#                             and its sanitizer runtimes, GoogleTest, clang-format, ccache, the
#                             servers and clients of the integration tests (nginx, ZooKeeper,
#                             JDK 17 + Maven, Chromium, Node.js + npm, Python + pip/venv,
#                             Prometheus, nghttp2), Go (for the Go test tools), GNU time, and
#                             the shells whose completions are tested
#   scripts/deps.sh bench     build + the benchmarks' peers (wrk, ab, h2load, hey, ...)
#
# Nothing is installed when everything is present (and nothing is printed). Otherwise the
# missing Debian packages are installed with apt-get: directly as root, through sudo when it is
# available (it may ask for a password on a terminal); without either, the script prints the
# one command to run and exits 1. HAMMER_DEPS=check only reports, never installs.
#
# Each need is a Debian package and, where one exists, a probe that works on any system (a
# command, a pkg-config module, a header the compiler finds): a need is met when its probe
# passes or dpkg says the package is installed. Without dpkg (not Debian), the probes decide
# and what is missing is listed by name, for the local package manager.
set -euo pipefail

# package|probe   probe: cmd:NAME (on PATH or in /usr/sbin), pc:MODULE (pkg-config),
#                 hdr:HEADER (the C++ compiler finds it), py:MODULE (python3 imports it),
#                 exe:PATH (an executable file there); no probe: dpkg only.
build_needs=(
  "g++|cmd:c++" "make|cmd:make" "cmake|cmd:cmake" "ninja-build|cmd:ninja"
  "pkg-config|cmd:pkg-config"
  "libssl-dev|pc:openssl" "libre2-dev|pc:re2" "libcli11-dev|pc:CLI11" "libfmt-dev|pc:fmt"
  "libsimdjson-dev|pc:simdjson" "nlohmann-json3-dev|pc:nlohmann_json" "zlib1g-dev|pc:zlib"
  "libzookeeper-mt-dev|hdr:zookeeper/zookeeper.h" "libnghttp2-dev|pc:libnghttp2"
  "libsnappy-dev|pc:snappy" "libzstd-dev|pc:libzstd"
)
package_needs=("dpkg-dev|cmd:dpkg-shlibdeps" "file|cmd:file")
test_needs=(
  # builds: the clang ASan/UBSan/libFuzzer and TSan builds, unit tests, format, cache
  "clang|cmd:clang++" "libclang-rt-14-dev" "clang-format|cmd:clang-format"
  "libgtest-dev|pc:gtest" "libgmock-dev|pc:gmock" "ccache|cmd:ccache" "git|cmd:git"
  # integration tests: servers, clients and runtimes they start
  "nginx|cmd:nginx" "ruby|cmd:ruby" "ruby-curb" "zookeeper" "openssl|cmd:openssl"
  "ca-certificates" "netcat-openbsd" "chromium|cmd:chromium" "maven|cmd:mvn"
  "openjdk-17-jdk-headless" "nodejs|cmd:node" "npm|cmd:npm" "python3|cmd:python3"
  "python3-pip|py:pip" "python3-venv|py:ensurepip"
  "prometheus|cmd:prometheus" "nghttp2-client|cmd:nghttp" "curl|cmd:curl"
  # the installed package: man pages and the completions of each shell
  "man-db|cmd:man" "zsh|cmd:zsh" "fish|cmd:fish"
  # Go builds the Go test tools (scripts/go-deps.sh: h2spec, toxiproxy); GNU time reads peak RSS
  "golang-go|cmd:go" "time|exe:/usr/bin/time"
)
bench_needs=(
  "libbenchmark-dev|pc:benchmark" "wrk|cmd:wrk" "apache2-utils|cmd:ab" "nghttp2-client|cmd:h2load"
  "hey|cmd:hey" "libcurl4-openssl-dev|pc:libcurl" "nginx|cmd:nginx" "ruby|cmd:ruby" "ruby-curb"
  "time" "gawk|cmd:gawk"
)

case "${1:-build}" in
  build) needs=("${build_needs[@]}") ;;
  package) needs=("${build_needs[@]}" "${package_needs[@]}") ;;
  test) needs=("${build_needs[@]}" "${package_needs[@]}" "${test_needs[@]}") ;;
  bench) needs=("${build_needs[@]}" "${bench_needs[@]}") ;;
  *) echo "usage: $0 build|package|test|bench" >&2; exit 2 ;;
esac

has_dpkg=false
command -v dpkg-query >/dev/null 2>&1 && has_dpkg=true

probe() {
  local kind=${1%%:*} arg=${1#*:}
  case $kind in
    # /usr/local/go/bin: where Go's own release archive installs (scripts/go-deps.sh looks too)
    cmd) command -v "$arg" >/dev/null 2>&1 || [ -x "/usr/sbin/$arg" ] || [ -x "/sbin/$arg" ] ||
      [ -x "/usr/local/go/bin/$arg" ] ;;
    pc) command -v pkg-config >/dev/null 2>&1 && pkg-config --exists "$arg" ;;
    hdr) echo "#include <$arg>" | "${CXX:-c++}" -x c++ -fsyntax-only - >/dev/null 2>&1 ;;
    py) command -v python3 >/dev/null 2>&1 && python3 -c "import $arg" >/dev/null 2>&1 ;;
    exe) [ -x "$arg" ] ;;
    *) return 1 ;;
  esac
}

describe() {
  local kind=${1%%:*} arg=${1#*:}
  case $kind in
    cmd) echo "command $arg" ;;
    pc) echo "pkg-config module $arg" ;;
    hdr) echo "header <$arg>" ;;
    py) echo "python3 module $arg" ;;
    exe) echo "executable $arg" ;;
  esac
}

deb_installed() {
  $has_dpkg && dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

missing=()      # Debian package names
missing_why=()  # the same, with the probe that failed, for a system without apt
for need in "${needs[@]}"; do
  pkg=${need%%|*}
  check=""
  [[ $need == *"|"* ]] && check=${need#*|}
  if [ -n "$check" ] && probe "$check"; then continue; fi
  if deb_installed "$pkg"; then continue; fi
  [[ " ${missing[*]} " == *" $pkg "* ]] && continue  # in two lists (nginx: test and bench)
  missing+=("$pkg")
  missing_why+=("$pkg${check:+: $(describe "$check")}")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! $has_dpkg || ! command -v apt-get >/dev/null 2>&1; then
  echo "hammer: missing (Debian package: what was looked for):" >&2
  printf '  %s\n' "${missing_why[@]}" >&2
  echo "This is not a Debian system: install the equivalents with its package manager." >&2
  exit 1
fi

install=(apt-get install -y --no-install-recommends "${missing[@]}")
sudo=()
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 &&
  { sudo -n true 2>/dev/null || [ -t 0 ]; }; then
  sudo=(sudo)
fi
if [ "${HAMMER_DEPS:-install}" = check ] || { [ "$(id -u)" -ne 0 ] && [ ${#sudo[@]} -eq 0 ]; }; then
  echo "hammer: missing Debian packages: ${missing[*]}" >&2
  echo "Install them as root, then run make again:" >&2
  echo "  sudo apt-get update && sudo ${install[*]}" >&2
  exit 1
fi
echo "hammer: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" "${install[@]}" -qq >/dev/null
