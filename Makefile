# The two set-up commands (README): `make run` and `make test`. Each installs what is missing,
# configures, builds, then runs the main job or the whole test suite.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: all deps test-deps configure build run test bench fuzz clean

all: build

# Debian packages, then web/node_modules (ECharts, embedded into the binary; playwright-core) from
# web/package-lock.json.
deps:
	@scripts/install-deps.sh

# The tests also open the HTML reports in Debian's chromium.
test-deps: deps
	@scripts/install-deps.sh --test

configure: deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# Main job: the built-in default scenario (vLLM, Llama-3.1-8B, H100, a bursty synthetic workload).
run: build
	$(BUILD)/headroom run scenarios/quickstart.yaml

# The whole suite, then every fuzz target for CI_FUZZ_SECONDS (docs/fuzzing.md) in its own clang build.
CI_FUZZ_SECONDS ?= 20
test: test-deps build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(CI_FUZZ_SECONDS)

bench: build
	$(BUILD)/bench/bench_allocator
	$(BUILD)/bench/bench_serving scenarios/vllm-azure-conv.yaml

# libFuzzer campaign (docs/fuzzing.md): every fuzz target for FUZZ_SECONDS each, two at a time, in its
# own Clang build with ASan and UBSan (no GPU programs, no benchmarks, no test suite).
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 30
fuzz: test-deps
	CC=clang-14 CXX=clang++-14 cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHEADROOM_FUZZ=ON \
	  -DHEADROOM_BUILD_TESTS=OFF -DHEADROOM_BUILD_BENCH=OFF -DHEADROOM_WITH_MPI=OFF
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target headroom_fuzz_targets
	scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) out
