# hammer — the two commands of the quick start are `make demo` and `make test`.
# Every target installs what it needs (scripts/deps.sh) so a fresh Debian machine needs nothing else.

JOBS ?= 2
RELEASE := build/release
ASAN := build/asan
FUZZ := build/fuzz
CMAKE_COMMON := -G Ninja -Wno-dev
# python3, or a virtual environment where python3 belongs to apt (scripts/python-env.sh).
PYTHON := $(shell scripts/python-env.sh)
PYTEST := $(PYTHON) -m pytest
FUZZ_SECONDS ?= 10

.PHONY: all build demo test bench unit asan fuzz-build fuzz integration format format-check clean \
        deps-build deps-test deps-bench

all: build

deps-build:
	@scripts/deps.sh build
deps-test:
	@scripts/deps.sh test
	@scripts/npm-deps.sh
	@scripts/python-deps.sh
	@PYTHON=$(PYTHON) scripts/jvm-deps.sh all
deps-bench:
	@scripts/deps.sh bench

build: deps-build
	@cmake -S . -B $(RELEASE) $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(RELEASE) -j $(JOBS)

# The main job on the embedded default: serve + load + stats + report, on loopback.
demo: build
	$(RELEASE)/hammer demo --html build/demo-report.html

asan: deps-build
	@cmake -S . -B $(ASAN) $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=Debug -DHAMMER_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN) -j $(JOBS)

fuzz-build: deps-test
	@cmake -S . -B $(FUZZ) $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHAMMER_FUZZ=ON \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
	@cmake --build $(FUZZ) -j $(JOBS)

# Runs every fuzz target for FUZZ_SECONDS from its seed corpus.
fuzz: fuzz-build
	@scripts/run-fuzzers.sh $(FUZZ) $(FUZZ_SECONDS)

unit: build asan
	$(RELEASE)/hammer_unit_tests --gtest_brief=1
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(ASAN)/hammer_unit_tests --gtest_brief=1

integration: build deps-test
	HAMMER=$(abspath $(RELEASE))/hammer $(PYTEST) -q -rs tests/integration

format-check: deps-test
	@scripts/format.sh --check

format: deps-test
	@scripts/format.sh

test: deps-test format-check unit fuzz integration

bench: deps-bench build
	@bench/run.sh

clean:
	rm -rf build
