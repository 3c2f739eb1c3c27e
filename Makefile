# hammer — the two commands of the quick start are `make demo` and `make test`.
# Every target first checks what it needs and installs only what is missing (scripts/deps.sh:
# apt-get as root or through sudo; without either it prints the command to run and stops).

JOBS ?= 2
RELEASE := build/release
# One clang build for ASan+UBSan and libFuzzer: the library carries coverage instrumentation,
# the unit tests link without libFuzzer, the fuzzers with it (CMakeLists.txt, HAMMER_FUZZ).
SANITIZE := build/asan
TSAN := build/tsan
# python3, or a virtual environment where python3 belongs to apt (scripts/python-env.sh).
PYTHON := $(shell scripts/python-env.sh)
PYTEST := $(PYTHON) -m pytest
FUZZ_SECONDS ?= 10
PREFIX ?= /usr/local
DESTDIR ?=

# Warnings are errors in every build made here (a plain cmake build only warns); ccache when
# installed; Ninja when installed.
CCACHE := $(shell command -v ccache 2>/dev/null)
CMAKE_COMMON := $(if $(shell command -v ninja 2>/dev/null),-G Ninja) -Wno-dev -DHAMMER_WERROR=ON \
  $(if $(CCACHE),-DCMAKE_C_COMPILER_LAUNCHER=$(CCACHE) -DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE))
CLANG := -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++

.PHONY: all build demo test bench unit unit-build asan fuzz-build fuzz tsan integration install \
        deb format format-check clean deps-build deps-package deps-test deps-bench

all: build

deps-build:
	@scripts/deps.sh build
deps-package:
	@scripts/deps.sh package
deps-test:
	@scripts/deps.sh test
	@scripts/npm-deps.sh
	@scripts/go-deps.sh
	@scripts/python-deps.sh
	@PYTHON=$(PYTHON) scripts/jvm-deps.sh all
deps-bench:
	@scripts/deps.sh bench

# The binary, its man pages and completions (the unit tests too once `make unit` asked for them).
build: deps-build
	@cmake -S . -B $(RELEASE) $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(RELEASE) -j $(JOBS) --target hammer hammer_docs

# The main job on the embedded default: serve + load + stats + report, on loopback.
demo: build
	$(RELEASE)/hammer demo --html build/demo-report.html

# make install PREFIX=/usr DESTDIR=/tmp/stage: bin, man1, bash/zsh/fish completions, docs.
install: build
	DESTDIR=$(DESTDIR) cmake --install $(RELEASE) --prefix $(PREFIX)

# build/deb/hammer_<version>_<arch>.deb; Depends from the binary's libraries (dpkg-shlibdeps).
deb: deps-package build
	@cpack -G DEB --config $(RELEASE)/CPackConfig.cmake -B build/deb >/dev/null
	@ls build/deb/*.deb

unit-build: deps-test
	@cmake -S . -B $(RELEASE) $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DBUILD_TESTING=ON >/dev/null
	@cmake --build $(RELEASE) -j $(JOBS)

# A build/asan that GCC configured (before the ASan and fuzz builds were one) is made afresh:
# CMake would drop the -D options below when it clears the cache for the new compiler.
# -O1 and line tables only (-g1: file:line in reports), assertions kept, as the TSan build
# below: the level ASan's and libFuzzer's documentation use, and 10-15 % cheaper to compile than
# -O2 -g under ASan+UBSan (this build is CI's largest: the library, the unit tests and every
# fuzz target; the unit tests' own files are at -O0, CMakeLists.txt).
asan: deps-test
	@grep -qs '^CMAKE_CXX_COMPILER:.*clang' $(SANITIZE)/CMakeCache.txt || rm -rf $(SANITIZE)
	@cmake -S . -B $(SANITIZE) $(CMAKE_COMMON) $(CLANG) -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1" -DCMAKE_C_FLAGS_RELEASE="-O1 -g1" \
	  -DBUILD_TESTING=ON -DHAMMER_FUZZ=ON -DHAMMER_DOCS=OFF >/dev/null
	@cmake --build $(SANITIZE) -j $(JOBS) --target hammer hammer_unit_tests fuzzers

fuzz-build: asan

# Runs every fuzz target for FUZZ_SECONDS from its seed corpus, JOBS targets at a time.
fuzz: fuzz-build
	@scripts/run-fuzzers.sh $(SANITIZE) $(FUZZ_SECONDS) $(JOBS)

# ThreadSanitizer, in its own clang build: the unit tests (the library's threads: stats encoder,
# bulk reader and session, proxy threads, ZooKeeper sessions), then every dark integration test
# (tests/integration/test_dark*.py) against a TSan-built hammer: forking, comparison, capture,
# health checks, streams, tunnels and the proxy's loop threads under real upstreams. Every
# report fails the run (the binary's go to build/tsan/reports/, printed and then failed on);
# tests/unit/tsan.supp names the two races inside libraries that are suppressed, and why.
# HAMMER_TSAN tells the one test sized by volume (a 10 GiB answer) to send 1 GiB.
# -O1 and line tables only (-g1: file:line in reports), assertions kept (no -DNDEBUG): about a
# third cheaper to build than -O2 -g, and TSan's usual optimisation level.
tsan: deps-test
	@cmake -S . -B $(TSAN) $(CMAKE_COMMON) $(CLANG) -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1" -DCMAKE_C_FLAGS_RELEASE="-O1 -g1" \
	  -DBUILD_TESTING=ON -DHAMMER_TSAN=ON -DHAMMER_DOCS=OFF >/dev/null
	@cmake --build $(TSAN) -j $(JOBS) --target hammer_unit_tests hammer
	TSAN_OPTIONS=suppressions=$(CURDIR)/tests/unit/tsan.supp $(TSAN)/hammer_unit_tests --gtest_brief=1
	@rm -rf $(TSAN)/reports && mkdir -p $(TSAN)/reports
	TSAN_OPTIONS="suppressions=$(CURDIR)/tests/unit/tsan.supp log_path=$(abspath $(TSAN))/reports/tsan" \
	  HAMMER_TSAN=1 HAMMER=$(abspath $(TSAN))/hammer $(PYTEST) -q -rs tests/integration/test_dark*.py
	@if ls $(TSAN)/reports/tsan* >/dev/null 2>&1; then cat $(TSAN)/reports/tsan*; \
	  echo "tsan: ThreadSanitizer reports from hammer under tests/integration/test_dark*.py (above)"; \
	  exit 1; fi

unit: unit-build asan
	$(RELEASE)/hammer_unit_tests --gtest_brief=1
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(SANITIZE)/hammer_unit_tests --gtest_brief=1

integration: unit-build deps-test
	HAMMER=$(abspath $(RELEASE))/hammer $(PYTEST) -q -rs tests/integration

format-check: deps-test
	@scripts/format.sh --check

format: deps-test
	@scripts/format.sh

test: deps-test format-check unit tsan fuzz integration

bench: deps-bench build
	@bench/run.sh

clean:
	rm -rf build
