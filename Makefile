# The two set-up commands (README): `make run` and `make test`. Each installs what is missing,
# configures, builds, then runs the main job or the whole test suite.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: all deps test-deps configure build run test release-suite clang-configure clang-build sanitize sanitizer-suite bench fuzz fuzz-run clean

all: build

# Debian packages, then web/node_modules (ECharts, embedded into the binary; playwright-core) from
# web/package-lock.json.
deps:
	@scripts/install-deps.sh

# The tests also open the HTML reports in Debian's chromium.
test-deps: deps
	@scripts/install-deps.sh --test

# Each configure and build step is one line (scripts/stage.sh): its log goes to the build folder,
# and is printed whole, less the progress lines, only when the step fails.
STAGE = @scripts/stage.sh
# Ninja (Debian's ninja-build): it compiles a layer's files while the layer below still links, where
# Make waits for the whole target; with the unity builds (sim/CMakeLists.txt) a layer is only a few
# translation units, so that overlap is what keeps both cores busy. A build folder configured earlier
# with another generator is reconfigured (CMake refuses to switch generators in place).
GENERATOR = Ninja
define configure_with_ninja
	@if [ -f $(1)/CMakeCache.txt ] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=$(GENERATOR)$$' $(1)/CMakeCache.txt; then \
	  echo "$(1) was configured with another generator: reconfiguring it for $(GENERATOR)"; \
	  rm -rf $(1)/CMakeCache.txt $(1)/CMakeFiles; fi
endef

configure: deps
	$(call configure_with_ninja,$(BUILD))
	$(STAGE) "configure $(BUILD)" $(BUILD)/logs/configure.log cmake -S . -B $(BUILD) -G $(GENERATOR) $(CMAKE_FLAGS)

build: configure
	$(STAGE) "build $(BUILD) (everything)" $(BUILD)/logs/build.log cmake --build $(BUILD) -j $(JOBS)

# Main job: the built-in default scenario (vLLM, Llama-3.1-8B, H100, a bursty synthetic workload).
# Only the headroom binary is built for it.
run: configure
	$(STAGE) "build $(BUILD)/headroom" $(BUILD)/logs/build-headroom.log cmake --build $(BUILD) -j $(JOBS) --target headroom
	$(BUILD)/headroom run scenarios/quickstart.yaml

# The whole suite in Release; then the clang build (CLANG_BUILD: ASan + LeakSanitizer + UBSan and
# libFuzzer's coverage instrumentation in one build) runs the whole suite again and every fuzz
# target for CI_FUZZ_SECONDS (docs/fuzzing.md). Times of each stage: docs/development.md.
# The Release suite runs while the clang build compiles: the suite alone leaves a core idle for half
# its time (its longest test drives Chromium), which the compiler fills. Each one's output is printed
# whole when it ends (--output-sync).
# 6 s a target: every target loads its seeds and corpus and fuzzes past them (thousands of
# executions each); a second more costs about 6.5 s of `make test` (13 targets, two at a time).
# Longer campaigns: `make fuzz FUZZ_SECONDS=600` (docs/fuzzing.md).
CI_FUZZ_SECONDS ?= 6
test: test-deps build clang-configure
	@$(MAKE) --no-print-directory -j2 --output-sync=target release-suite clang-build
	@$(MAKE) --no-print-directory sanitizer-suite
	@$(MAKE) --no-print-directory fuzz-run FUZZ_SECONDS=$(CI_FUZZ_SECONDS)

release-suite:
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The clang build (cmake/sanitize.cmake and cmake/fuzz.cmake): clang-14, ASan + LeakSanitizer +
# UBSan on every target, libFuzzer's instrumentation on every library, the fuzz targets linked with
# libFuzzer; no benchmarks, no GPU calibrator. A sanitizer finding aborts the process, so its test fails.
# detect_stack_use_after_return finds pointers to a returned function's locals;
# strict_string_checks checks C-string arguments in full, not just the bytes a call reads.
CLANG_BUILD ?= build-clang
CLANG_FLAGS ?= -DCMAKE_BUILD_TYPE=Debug -DHEADROOM_SANITIZE=ON -DHEADROOM_FUZZ=ON -DHEADROOM_BUILD_BENCH=OFF
SANITIZE_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1 \
               UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# LeakSanitizer runs with its defaults (fast unwinding, no suppressions) for every test but the
# mpirun sweep, which gets OpenMPI's suppressions (tests/sanitize/lsan.supp) from tests/CMakeLists.txt.

clang-configure: test-deps
	$(call configure_with_ninja,$(CLANG_BUILD))
	$(STAGE) "configure $(CLANG_BUILD)" $(CLANG_BUILD)/logs/configure.log \
	  env CC=clang-14 CXX=clang++-14 cmake -S . -B $(CLANG_BUILD) -G $(GENERATOR) $(CLANG_FLAGS)

# The whole suite under the sanitizers.
sanitize: clang-configure
	@$(MAKE) --no-print-directory clang-build
	@$(MAKE) --no-print-directory sanitizer-suite

clang-build:
	$(STAGE) "build $(CLANG_BUILD) (everything)" $(CLANG_BUILD)/logs/build.log cmake --build $(CLANG_BUILD) -j $(JOBS)

sanitizer-suite:
	$(SANITIZE_ENV) ctest --test-dir $(CLANG_BUILD) --output-on-failure -j $(JOBS)

bench: build
	$(BUILD)/bench/bench_allocator
	$(BUILD)/bench/bench_serving scenarios/vllm-azure-conv.yaml

# libFuzzer campaign (docs/fuzzing.md): every fuzz target for FUZZ_SECONDS each, two at a time.
# `fuzz` builds only the fuzz targets of the clang build; `fuzz-run` runs what is built.
FUZZ_SECONDS ?= 30
fuzz: clang-configure
	$(STAGE) "build $(CLANG_BUILD) (fuzz targets)" $(CLANG_BUILD)/logs/build-fuzz.log \
	  cmake --build $(CLANG_BUILD) -j $(JOBS) --target headroom_fuzz_targets
	$(MAKE) --no-print-directory fuzz-run

fuzz-run:
	scripts/fuzz.sh $(CLANG_BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(CLANG_BUILD) out
