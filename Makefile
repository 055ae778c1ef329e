# The two set-up commands (README): `make run` and `make test`. Each installs what is missing,
# configures, builds, then runs the main job or the whole test suite.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: all deps test-deps configure build run test sanitize bench fuzz clean

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

# The whole suite; the whole suite again built with AddressSanitizer and UBSan (`sanitize`); then
# every fuzz target for CI_FUZZ_SECONDS (docs/fuzzing.md) in its own clang build.
CI_FUZZ_SECONDS ?= 20
test: test-deps build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	$(MAKE) --no-print-directory sanitize
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(CI_FUZZ_SECONDS)

# The sanitizer build (cmake/sanitize.cmake): clang-14, ASan + LeakSanitizer + UBSan on every
# target, no bench, no GPU calibrator. Any finding aborts the process, so its test fails.
# detect_stack_use_after_return finds pointers to a returned function's locals;
# strict_string_checks checks C-string arguments in full, not just the bytes a call reads.
ASAN_BUILD ?= build-asan
SANITIZE_FLAGS ?= -DCMAKE_BUILD_TYPE=Debug -DHEADROOM_SANITIZE=ON -DHEADROOM_BUILD_BENCH=OFF
SANITIZE_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1 \
               UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# LeakSanitizer runs with its defaults (fast unwinding, no suppressions) for every test but the
# mpirun sweep, which gets OpenMPI's suppressions (tests/sanitize/lsan.supp) from tests/CMakeLists.txt.

sanitize: test-deps
	CC=clang-14 CXX=clang++-14 cmake -S . -B $(ASAN_BUILD) $(SANITIZE_FLAGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	$(SANITIZE_ENV) ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

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
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) out
