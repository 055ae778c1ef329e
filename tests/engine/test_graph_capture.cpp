// The CUDA-graph capture sequence (graph_capture.hpp) through the caching allocator model: a pool
// size worked by hand from the allocator's rules, and the capture programs of two real H100
// recordings (../shared/gpu/record_graphs.py, PyTorch 2.11: a Llama-3.1-8B-shaped decoder of 8
// layers captured at 11 and 7 batch sizes, largest first) run through the same sequence, against
// the pool bytes and segments of their meta files.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "sim/allocator/snapshot.hpp"
#include "sim/engine/graph_capture.hpp"
#include "sim/engine/startup.hpp"
#include "sim/model/catalogue.hpp"
#include "sim/model/forward_program.hpp"
#include "tests/engine/deployment_on.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom;
using namespace headroom::engine;

namespace {

struct PoolFigures {
  Bytes bytes = 0;
  int segments = 0;
};

PoolFigures private_pools(const alloc::CachingAllocator& a) {
  PoolFigures f;
  for (const alloc::SnapshotSegment& s : a.segments())
    if (s.pool_id != std::pair<std::int64_t, std::int64_t>{0, 0}) f.bytes += s.total_size, ++f.segments;
  return f;
}

// bs × 2 MiB, bs × 2 MiB, drop the first, bs × 256 B, drop the rest; `hold` keeps the last (the
// graph's output) as a persistent buffer of its own.
model::AllocationProgram hand_program(int bs, bool hold) {
  using model::OpKind;
  using model::Tensor;
  model::AllocationProgram p;
  p.name = "hand";
  const Bytes b = static_cast<Bytes>(bs);
  p.ops.push_back({b * 2 * MiB, 0, model::kNoLayer, OpKind::alloc, Tensor::hidden, false});
  p.ops.push_back({b * 2 * MiB, 1, model::kNoLayer, OpKind::alloc, Tensor::residual, false});
  p.ops.push_back({0, 0, model::kNoLayer, OpKind::free, Tensor::hidden, false});
  if (hold) {
    p.ops.push_back({b * 256, model::persistent_key(Tensor::sampled_ids, bs), model::kNoLayer, OpKind::alloc,
                     Tensor::sampled_ids, true});
    p.persistent = 1;
  } else {
    p.ops.push_back({b * 256, 2, model::kNoLayer, OpKind::alloc, Tensor::sampled_ids, false});
  }
  p.ops.push_back({0, 1, model::kNoLayer, OpKind::free, Tensor::residual, false});
  if (!hold) p.ops.push_back({0, 2, model::kNoLayer, OpKind::free, Tensor::sampled_ids, false});
  p.slots = 3;
  REQUIRE(model::check_program(p).empty());
  return p;
}

struct HandCapture {
  device::Device device{device::DeviceSpec{.name = "test", .total = 8 * GiB}};
  alloc::CachingAllocator allocator{device};
  model::SlotTable slots;
  std::vector<alloc::Block*> rng;
  std::vector<model::AllocationProgram> warmups, captures;
  GraphCaptureRun run;

  HandCapture(GraphPools pools, bool hold) {
    for (int bs : {4, 2, 1}) warmups.push_back(hand_program(bs, false)), captures.push_back(hand_program(bs, hold));
    std::vector<GraphCaptureStep> steps;
    for (std::size_t i = 0; i < captures.size(); ++i) steps.push_back({&warmups[i], &captures[i]});
    GraphCaptureOptions o;
    o.pools = pools;
    run = capture_graphs(allocator, slots, rng, steps, o);
  }
};

}  // namespace

TEST_CASE("graph capture by hand: sizes 4, 2, 1 share one 22 MiB pool, a pool per graph takes 66 MiB") {
  // Capture 4: 8 MiB and 8 MiB are large requests under 10 MiB, so one 20 MiB segment (kLargeBuffer)
  // holds both; the 1 KiB output takes a 2 MiB small segment (kSmallBuffer). Captures 2 and 1 find
  // both segments free in the shared pool: 22 MiB in 2 segments, whatever the number of sizes.
  HandCapture shared(GraphPools::shared, false);
  REQUIRE(shared.run.completed);
  PoolFigures p = private_pools(shared.allocator);
  CHECK(p.bytes == 22 * MiB);
  CHECK(p.segments == 2);
  CHECK(shared.run.pools == std::vector<alloc::PoolId>(3, alloc::PoolId{0, 1}));
  // The warm-ups ran in the default pool (20 MiB + 2 MiB), where the generator's seed and offset
  // (two 8 B tensors, the first capture only) share the small segment.
  CHECK(shared.allocator.reserved_bytes() - p.bytes == 22 * MiB);
  REQUIRE(shared.rng.size() == 2);
  CHECK(shared.rng[0]->size == 512);
  CHECK(shared.allocator.allocated_bytes() == 2 * 512);  // nothing of the graphs stays allocated

  // Outputs held (1024, 512 and 512 B after rounding) fit in the same small segment.
  HandCapture held(GraphPools::shared, true);
  REQUIRE(held.run.completed);
  CHECK(private_pools(held.allocator).bytes == 22 * MiB);
  CHECK(held.allocator.allocated_bytes() == 2 * 512 + 1024 + 512 + 512);

  // torch.cuda.graph(g) without a pool: each graph has its own 20 + 2 MiB.
  HandCapture own(GraphPools::one_per_graph, true);
  REQUIRE(own.run.completed);
  p = private_pools(own.allocator);
  CHECK(p.bytes == 3 * 22 * MiB);
  CHECK(p.segments == 6);
  CHECK(own.run.pools == std::vector<alloc::PoolId>{{1, 0}, {2, 0}, {3, 0}});
}

namespace {

// The capture programs of a record_graphs.py recording: the allocations and frees on the capturing
// stream (the stream of the pool segments), one program per capture (a capture ends where the next
// size's warm-up, on a stream of its own, begins). Blocks a capture leaves allocated (the graph's
// output, the capturing stream's cuBLAS workspace at the first capture) become persistent buffers.
// The two allocations outside every private pool are the generator's seed and offset, which
// capture_graphs makes itself: they are left out, and counted.
struct RecordedCaptures {
  std::vector<model::AllocationProgram> programs;
  int outside_pool = 0;
  Bytes outside_pool_bytes = 0;
};

RecordedCaptures recorded_captures(const alloc::Snapshot& snap) {
  StreamId capture = 0;
  std::vector<std::pair<Address, Bytes>> pool_segments;
  for (const alloc::SnapshotSegment& s : snap.segments)
    if (s.pool_id != std::pair<std::int64_t, std::int64_t>{0, 0})
      capture = s.stream, pool_segments.emplace_back(s.address, s.total_size);
  const auto in_pool = [&](Address a) {
    for (const auto& [base, size] : pool_segments)
      if (a >= base && a < base + size) return true;
    return false;
  };
  // Pass 1: the trace index of each capture's allocations and whether the capture frees them.
  struct Event {
    std::size_t capture;
    Bytes bytes;
    bool freed = false;
    std::uint32_t slot = 0;
  };
  std::vector<Event> allocs;
  std::vector<std::vector<std::pair<bool, std::size_t>>> ops;  // per capture: (is alloc, index in allocs)
  std::map<Address, std::size_t> live;
  RecordedCaptures out;
  StreamId warmup = 0;
  for (const alloc::TraceEvent& e : snap.device_traces.at(0)) {
    if (e.stream != 0 && e.stream != capture && e.stream != warmup) warmup = e.stream, ops.emplace_back();
    if (e.stream != capture || ops.empty()) continue;
    if (e.action == alloc::TraceAction::Alloc) {
      if (!in_pool(e.addr)) {
        ++out.outside_pool, out.outside_pool_bytes += e.size;
        continue;
      }
      live[e.addr] = allocs.size();
      ops.back().emplace_back(true, allocs.size());
      allocs.push_back({ops.size() - 1, e.size});
    } else if (e.action == alloc::TraceAction::FreeCompleted) {
      auto it = live.find(e.addr);
      if (it == live.end()) continue;  // outside the pool
      REQUIRE(allocs[it->second].capture == ops.size() - 1);  // no capture frees another's output
      allocs[it->second].freed = true;
      ops.back().emplace_back(false, it->second);
      live.erase(it);
    }
  }
  // Pass 2: the programs.
  for (std::size_t c = 0; c < ops.size(); ++c) {
    model::AllocationProgram p;
    p.name = "recorded capture";
    std::int32_t held = 0;
    for (const auto& [is_alloc, index] : ops[c]) {
      Event& ev = allocs[index];
      model::ProgramOp op;
      op.tensor = model::Tensor::hidden;
      if (!is_alloc) {
        op.kind = model::OpKind::free;
        op.slot = ev.slot;
      } else if (ev.freed) {
        op.bytes = ev.bytes;
        op.slot = ev.slot = p.slots++;
      } else {
        op.bytes = ev.bytes;
        op.persistent = true;
        op.slot = model::persistent_key(model::Tensor::sampled_ids, static_cast<std::int32_t>(c) * 100 + held++);
        ++p.persistent;
      }
      p.ops.push_back(op);
    }
    REQUIRE(model::check_program(p).empty());
    out.programs.push_back(std::move(p));
  }
  return out;
}

PoolFigures replay_captures(const std::string& tag, GraphPools pools, const nlohmann::json& meta) {
  const auto dir = headroom::test::gpu_file("h100-2026-11-25/recordings");
  const RecordedCaptures rec = recorded_captures(alloc::read_snapshot(dir / (tag + ".pickle.gz")));
  REQUIRE(rec.programs.size() == meta["sizes"].size());
  CHECK(rec.outside_pool == 2);  // the generator's seed and offset, at the first capture only
  CHECK(rec.outside_pool_bytes == 16);
  device::Device dev(device::DeviceSpec{.name = "NVIDIA H100 80GB HBM3", .total = 85017493504});
  alloc::CachingAllocator a(dev);
  model::SlotTable slots;
  std::vector<alloc::Block*> rng;
  std::vector<GraphCaptureStep> steps;
  for (const model::AllocationProgram& p : rec.programs) steps.push_back({nullptr, &p});
  GraphCaptureOptions o;
  o.pools = pools;
  o.capture_stream = 1;
  const GraphCaptureRun run = capture_graphs(a, slots, rng, steps, o);
  REQUIRE(run.completed);
  CHECK(rng.size() == 2);
  return private_pools(a);
}

nlohmann::json recording_meta(const std::string& tag) {
  std::ifstream in(headroom::test::gpu_file("h100-2026-11-25/recordings/" + tag + ".meta.json"));
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("graph capture against H100 recordings: one shared pool, 11 sizes, 7.06 GiB in 11 segments") {
  const nlohmann::json meta = recording_meta("graphs_shared_s2");
  REQUIRE(meta["shared_pool"] == true);
  const PoolFigures p = replay_captures("graphs_shared_s2", GraphPools::shared, meta);
  CHECK(p.bytes == meta["pool_bytes"].get<Bytes>());  // 7,579,107,328
  CHECK(p.segments == meta["pool_segments"].get<int>());
}

TEST_CASE("graph capture against H100 recordings: a pool per graph, 7 sizes, 6.30 GiB in 44 segments") {
  const nlohmann::json meta = recording_meta("graphs_private_s2");
  REQUIRE(meta["shared_pool"] == false);
  const PoolFigures p = replay_captures("graphs_private_s2", GraphPools::one_per_graph, meta);
  CHECK(p.bytes == meta["pool_bytes"].get<Bytes>());  // 6,767,509,504
  CHECK(p.segments == meta["pool_segments"].get<int>());
}

TEST_CASE("engine start-up: the RNG state of graph capture is allocated once, for the first graph") {
  // vLLM captures 51 piecewise and 51 full graphs by default (§1.5); the generator registers its
  // seed and offset when the first graph does (CUDAGeneratorState::register_graph).
  StartupResult r = vllm_startup(headroom::engine::test::on("h100-sxm-80gb"), VllmConfig{});
  REQUIRE(r.ok);
  CHECK(r.graph_batch_sizes.size() == 51);
  REQUIRE(r.memory.graph_rng_state.size() == 2);
  CHECK(r.memory.graph_rng_state[0]->size == 512);
  CHECK(r.memory.graph_rng_state[0]->pool->owner_private_pool == nullptr);
}

TEST_CASE("the graph pool stays reserved while serving: eager steps above the largest size, empty_cache") {
  StartupResult r = vllm_startup(headroom::engine::test::on("h100-sxm-80gb"), VllmConfig{});
  REQUIRE(r.ok);
  alloc::CachingAllocator& a = *r.memory.allocator;
  const Bytes pool = a.private_pool_reserved_bytes();
  REQUIRE(pool == r.bytes.graph_pool);
  REQUIRE(pool > 0);
  // 1024 decode sequences: above the largest captured size (512), so the step runs eagerly.
  REQUIRE(r.graph_batch_sizes.back() == 512);
  const model::AllocationProgram eager = model::forward_program(model::catalogue_model("Llama-3.1-8B"),
                                                                model::ForwardShape{1024, 1024, 1024, 1}, r.forward);
  const model::ProgramRun run = model::run_program(a, eager, *r.memory.slots);
  REQUIRE(run.completed);
  CHECK(a.private_pool_reserved_bytes() == pool);
  a.empty_cache();  // releases cached default-pool segments only: the graphs still use the pool
  CHECK(a.private_pool_reserved_bytes() == pool);
  a.check_invariants();
}
