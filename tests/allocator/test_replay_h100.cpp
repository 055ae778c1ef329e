// Replays of ../shared/gpu's H100 recordings (PyTorch 2.11, issue 19 item 1): CUDA-graph captures
// into a shared pool and into one pool per graph, and histories recorded with expandable segments.
// The faithful replay puts every allocation at its recorded address and ends in the recorded
// segments; the what-if of a recording under its own configuration, with the program's own
// empty_cache() calls, gives the recorded peak reserved memory and cudaMalloc count (meta files).
// Each recording is decoded once per test case.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/allocator/replay.hpp"
#include "sim/allocator/snapshot.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom;
using namespace headroom::alloc;

namespace {

nlohmann::json h100_meta(const std::string& tag) {
  std::ifstream in(test::gpu_file("h100-2026-11-25/recordings/" + tag + ".meta.json"));
  return nlohmann::json::parse(in);
}

Snapshot h100_recording(const std::string& tag) {
  return read_snapshot(test::gpu_file("h100-2026-11-25/recordings/" + tag + ".pickle.gz"));
}

// The faithful replay is address-exact with the recorded final state; returns it.
ReplayReport replay_exactly(const Snapshot& snap) {
  const ReplayReport r = replay_snapshot(snap, {});
  CHECK(r.allocations > 1000);
  CHECK(r.address_matches == r.allocations);
  CHECK(r.segment_matches == r.segment_events);
  CHECK(r.model_only_segment_events == 0);
  CHECK(r.unknown_frees == 0);
  CHECK(r.model_ooms == 0);
  CHECK(r.final_state_matches);
  CHECK(r.first_difference == "");
  return r;
}

void check_graph_recording(const std::string& tag, std::size_t captures) {
  const nlohmann::json meta = h100_meta(tag);
  const Snapshot snap = h100_recording(tag);
  const ReplayReport r = replay_exactly(snap);
  // One capture per batch size (record_graphs.py captures each size once, largest first).
  CHECK(r.captures == captures);
  CHECK(meta["sizes"].size() == captures);
  CHECK(r.peak_reserved == meta["stats"]["reserved_bytes.all.peak"].get<Bytes>());
  CHECK(r.final_reserved == meta["stats"]["reserved_bytes.all.current"].get<Bytes>());
  CHECK(r.final_allocated == meta["stats"]["allocated_bytes.all.current"].get<Bytes>());
  CHECK(r.peak_allocated == meta["stats"]["allocated_bytes.all.peak"].get<Bytes>());
  // The graph pools' segments and bytes at the end, as the meta file counted them.
  std::size_t pool_segments = 0;
  Bytes pool_bytes = 0;
  for (const SnapshotSegment& s : r.final_model_state.segments) {
    if (s.pool_id == std::pair<std::int64_t, std::int64_t>{0, 0}) continue;
    ++pool_segments;
    pool_bytes += s.total_size;
  }
  CHECK(pool_segments == meta["pool_segments"].get<std::size_t>());
  CHECK(pool_bytes == meta["pool_bytes"].get<Bytes>());

  ReplayOptions o;
  o.what_if = recorded_config(snap.allocator_settings);
  o.empty_cache_events = r.empty_cache_events;
  const ReplayReport w = replay_snapshot(snap, o);
  CHECK(w.peak_reserved == meta["stats"]["reserved_bytes.all.peak"].get<Bytes>());
  CHECK(w.final_reserved == meta["stats"]["reserved_bytes.all.current"].get<Bytes>());
  CHECK(w.cuda_malloc_calls == meta["stats"]["segment.all.allocated"].get<std::int64_t>());
  CHECK(w.cuda_free_calls == meta["stats"]["segment.all.freed"].get<std::int64_t>());
}

}  // namespace

TEST_CASE("replay H100: CUDA-graph captures into one shared pool, address-exact, and their what-if") {
  // graph_pool_handle() shared by 11 captures, warm-up runs on side streams, replays between
  // eager prefill steps; torch.cuda.graph's empty_cache before each capture.
  check_graph_recording("graphs_shared_s2", 11);
}

TEST_CASE("replay H100: CUDA-graph captures into one pool per graph, address-exact, and their what-if") {
  check_graph_recording("graphs_private_s2", 7);
}

TEST_CASE("replay H100: a serving history recorded with expandable segments, address-exact") {
  const nlohmann::json meta = h100_meta("serve_expandable_s31");
  REQUIRE(meta["alloc_conf"] == "expandable_segments:True");
  const Snapshot snap = h100_recording("serve_expandable_s31");
  const ReplayReport r = replay_exactly(snap);
  CHECK(r.config == "expandable_segments:True");
  CHECK(r.segment_events == 32);  // segment_map entries, one per map call (20 MiB and 2 MiB pages)
  CHECK(r.peak_reserved == meta["stats"]["reserved_bytes.all.peak"].get<Bytes>());
  CHECK(r.final_allocated == meta["stats"]["allocated_bytes.all.current"].get<Bytes>());
  CHECK(r.peak_allocated == meta["stats"]["allocated_bytes.all.peak"].get<Bytes>());
}

TEST_CASE("replay H100: one step stream under three configurations, each what-if equals its recording") {
  // whatif_expandable_s33 replays address-exactly; its request stream under the default
  // configuration and under max_split_size_mb:128 gives the peaks those recordings measured.
  const Snapshot snap = h100_recording("whatif_expandable_s33");
  const ReplayReport r = replay_exactly(snap);
  CHECK(r.peak_reserved == h100_meta("whatif_expandable_s33")["stats"]["reserved_bytes.all.peak"].get<Bytes>());
  for (const char* other : {"whatif_default_s33", "whatif_maxsplit128_s33"}) {
    INFO(other);
    const nlohmann::json meta = h100_meta(other);
    ReplayOptions o;
    o.what_if = parse_alloc_conf(meta["alloc_conf"].get<std::string>(), "alloc_conf");
    o.empty_cache_events = r.empty_cache_events;
    const ReplayReport w = replay_snapshot(snap, o);
    CHECK(w.peak_reserved == meta["stats"]["reserved_bytes.all.peak"].get<Bytes>());
    CHECK(w.peak_allocated == meta["stats"]["allocated_bytes.all.peak"].get<Bytes>());
    CHECK(w.cuda_malloc_calls == meta["stats"]["segment.all.allocated"].get<std::int64_t>());
  }
}
