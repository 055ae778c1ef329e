# The two set-up commands (README): `make run` and `make test`. Each installs what is missing,
# configures, builds, then runs the main job or the whole test suite.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: all deps configure build run test bench clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# Main job: generate a sample allocator history with the model, then replay it.
run: build
	mkdir -p out
	$(BUILD)/headroom sample-snapshot -o out/sample_snapshot.pickle
	$(BUILD)/headroom replay out/sample_snapshot.pickle --what-if expandable_segments:True --what-if max_split_size_mb:64

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

bench: build
	$(BUILD)/bench/bench_allocator

clean:
	rm -rf $(BUILD) out
