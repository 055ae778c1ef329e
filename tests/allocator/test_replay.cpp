// Replay of recorded allocator histories: the real public snapshots (addresses must match) and
// histories the model records itself, including segment_alloc/segment_free decisions.
#include <catch2/catch.hpp>

#include "sim/allocator/caching_allocator.hpp"
#include "sim/allocator/replay.hpp"
#include "sim/allocator/sample_history.hpp"
#include "sim/allocator/snapshot.hpp"
#include "sim/core/error.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom;
using namespace headroom::alloc;

namespace {

void check_faithful(const ReplayReport& r) {
  CHECK(r.allocations > 0);
  CHECK(r.address_matches == r.allocations);
  CHECK(r.segment_matches == r.segment_events);
  CHECK(r.model_only_segment_events == 0);
  CHECK(r.unknown_frees == 0);
  CHECK(r.final_state_compared);
  CHECK(r.first_difference == "");
  CHECK(r.final_state_matches);
}

}  // namespace

TEST_CASE("replay: cs336_magma27 training step, every address and the final state match") {
  Snapshot snap = read_snapshot(test::data_file("torch_snapshots/cs336_magma27_train_step.pickle"));
  ReplayOptions o;
  o.check_invariants = true;
  ReplayReport r = replay_snapshot(snap, o);
  CHECK(r.events == 5163);
  CHECK(r.allocations == 1721);
  CHECK(r.frees == 1721);
  check_faithful(r);
  CHECK(r.start_segments == 216);
  // traces/README §3a: 216 segments, 14.18 GB reserved, 1.38 GB allocated at the end.
  CHECK(r.final_reserved == 14'180'941'824ull);
  CHECK(r.final_allocated == 1'377'753'600ull);
  CHECK(r.peak_allocated > r.final_allocated);
}

TEST_CASE("replay: cs336_bcrafton training step, every address and the final state match") {
  Snapshot snap = read_snapshot(test::data_file("torch_snapshots/cs336_bcrafton_train_step.pickle"));
  ReplayOptions o;
  o.check_invariants = true;
  ReplayReport r = replay_snapshot(snap, o);
  CHECK(r.events == 6486);
  CHECK(r.allocations == 2162);
  check_faithful(r);
  CHECK(r.start_segments == 96);
  // traces/README §3a: 96 segments, 4.24 GB reserved, 3.07 GB allocated.
  CHECK(r.final_reserved == 4'238'344'192ull);
  CHECK(r.final_allocated == 3'072'871'424ull);
}

TEST_CASE("replay: the state-only kivi snapshot loads and its statistics equal the segment figures") {
  Snapshot snap = read_snapshot(test::data_file("torch_snapshots/kivi_sketchkv2_llm_inference_state.pickle"));
  Bytes seg_total = 0, seg_allocated = 0, seg_active = 0, active_block_bytes = 0;
  std::size_t small = 0, active_blocks = 0, inactive_blocks = 0;
  for (const auto& s : snap.segments) {
    seg_total += s.total_size;
    seg_allocated += s.allocated_size;
    seg_active += s.active_size;
    small += s.is_large ? 0 : 1;
    for (const auto& b : s.blocks) {
      (b.state == BlockState::Inactive ? inactive_blocks : active_blocks)++;
      if (b.state != BlockState::Inactive) active_block_bytes += b.size;
    }
  }
  // traces/README §3a: 259 segments (243 large, 16 small), 17.13 GB reserved, 16.40 GB allocated,
  // 839 active and 29 inactive blocks.
  CHECK(snap.segments.size() == 259);
  CHECK(small == 16);
  CHECK(active_blocks == 839);
  CHECK(inactive_blocks == 29);
  CHECK(seg_total == 17'133'731'840ull);
  CHECK(seg_allocated == 16'397'578'240ull);
  // A segment's active_size counts its allocated and pending-free blocks (PyTorch's
  // CUDACachingAllocator.cpp, segment_info), so it equals those blocks' sizes.
  CHECK(seg_active == active_block_bytes);
  ReplayReport r = replay_snapshot(snap, {});
  CHECK(r.final_state_matches);
  CHECK(r.final_reserved == seg_total);
  CHECK(r.final_allocated == seg_allocated);
  // The one trace entry completes a free of a block that was pending when the state was taken.
  CHECK(r.frees == 1);
  CHECK(r.start_live_blocks == 840);
  CHECK(r.final_fragmentation.free_blocks == 29);
  CHECK(r.final_fragmentation.reserved_unallocated == seg_total - seg_allocated);
}

TEST_CASE("replay: a history the model records itself reproduces every segment decision") {
  for (std::uint64_t seed : {1ull, 2ull, 3ull}) {
    SampleHistoryOptions so;
    so.seed = seed;
    so.steps = 4;
    Snapshot snap = make_sample_history(so);
    ReplayOptions o;
    o.check_invariants = true;
    ReplayReport r = replay_snapshot(snap, o);
    INFO("seed " << seed);
    CHECK(r.segment_events > 20);
    check_faithful(r);
    CHECK(r.start_segments == 0);
  }
}

TEST_CASE("replay: a ring-buffer history that starts mid-run, with segment frees and an OOM") {
  device::Device dev(device::DeviceSpec{.total = 200 * MiB});
  CachingAllocator a(dev);
  // Before recording: state that the replay must rebuild from the final segments and the trace.
  Block* early_live = a.malloc(30 * MiB);
  Block* early_freed_later = a.malloc(3 * MiB);
  Block* cached = a.malloc(40 * MiB);
  a.free(cached);
  a.record_history(true, 25);  // a small ring: the oldest entries are overwritten
  for (int i = 0; i < 10; ++i) a.free(a.malloc(1 * MiB + 512 * static_cast<Bytes>(i)));
  a.free(early_freed_later);
  Block* big = a.malloc(100 * MiB);  // reuses nothing: cudaMalloc fails? 30+20+40+100 fits in 200
  REQUIRE(big);
  Block* too_big = a.malloc(150 * MiB);  // releases the cached 40 MiB segment, retries, then OOMs
  CHECK(too_big == nullptr);
  Block* after = a.malloc(12 * MiB);
  REQUIRE(after);
  a.free(big);
  Snapshot snap = a.snapshot();
  REQUIRE(snap.device_traces[0].size() == 25);
  ReplayOptions o;
  o.check_invariants = true;
  ReplayReport r = replay_snapshot(snap, o);
  CHECK(r.recorded_ooms == 1);
  CHECK(r.model_ooms == 1);
  check_faithful(r);
  (void)early_live;
  (void)after;
}

TEST_CASE("replay: explicit empty_cache calls between allocations are recognised") {
  device::Device dev(device::DeviceSpec{.total = 8 * GiB});
  CachingAllocator a(dev);
  a.record_history(true);
  Block* x = a.malloc(64 * MiB);
  Block* y = a.malloc(64 * MiB);
  a.free(x);
  a.empty_cache();            // releases x's segment; the next request is served from the cache
  Block* z = a.malloc(512);   // small pool: cache miss, new segment
  a.free(y);
  a.empty_cache();
  Block* w = a.malloc(64 * MiB);
  a.free(w);
  a.free(z);
  Snapshot snap = a.snapshot();
  ReplayReport r = replay_snapshot(snap, {});
  check_faithful(r);
  CHECK(r.segment_events == 6);
}

TEST_CASE("replay what-if: expandable segments and max_split_size on the recorded request stream") {
  Snapshot snap = read_snapshot(test::data_file("torch_snapshots/cs336_magma27_train_step.pickle"));
  ReplayOptions base;
  base.what_if = AllocatorConfig{};
  ReplayReport plain = replay_snapshot(snap, base);
  base.what_if = parse_alloc_conf("expandable_segments:True");
  ReplayReport expandable = replay_snapshot(snap, base);
  base.what_if = parse_alloc_conf("max_split_size_mb:128");
  ReplayReport capped = replay_snapshot(snap, base);
  for (const ReplayReport* r : {&plain, &expandable, &capped}) {
    CHECK(r->what_if);
    CHECK(r->allocations == 1721);
    CHECK(r->model_ooms == 0);
    CHECK(r->peak_reserved >= r->peak_allocated);
    CHECK_FALSE(r->final_state_compared);
  }
  // Same requests from an empty cache: expandable segments never reserve more at the peak.
  CHECK(expandable.peak_reserved <= plain.peak_reserved);
  // On a device smaller than the plain peak, the plain configuration OOMs.
  base.what_if = AllocatorConfig{};
  base.capacity = plain.peak_reserved - 64 * MiB;
  ReplayReport small = replay_snapshot(snap, base);
  CHECK(small.model_ooms > 0);
  REQUIRE(small.first_model_oom.has_value());
  CHECK(small.first_model_oom->total == *base.capacity);
}

TEST_CASE("replay: bad snapshots are clear errors") {
  Snapshot snap;
  SnapshotSegment s;
  s.address = 0x1000000;
  s.total_size = 20 * MiB;
  s.is_expandable = true;
  s.blocks.push_back(SnapshotBlock{0x1000000, 20 * MiB, 0, BlockState::Inactive});
  snap.segments.push_back(s);
  snap.device_traces.push_back({});
  CHECK_THROWS_WITH(replay_snapshot(snap, {}),
                    "expandable segment 0x1000000 had pages mapped before the history began: replaying a "
                    "history that starts after an expandable segment was mapped is not supported (record "
                    "from the first allocation on)");
  snap.segments[0].is_expandable = false;
  snap.device_traces[0].push_back(TraceEvent{TraceAction::FreeRequested, 0x9000000, 4096, 0, {}, {}, {0, 0}});
  CHECK_THROWS_WITH(replay_snapshot(snap, {}),
                    "block 0x9000000, live when the history starts, lies in no segment");
  ReplayOptions o;
  o.device = 3;
  CHECK_THROWS_WITH(replay_snapshot(snap, o), "--device 3: the snapshot has traces for 1 device(s)");
}
