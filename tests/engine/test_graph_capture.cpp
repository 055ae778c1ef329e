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

// What the engines' graphs allocate beyond the decode forward (docs/serving-memory-model.md §1.5).

TEST_CASE("graph programs: FA3's split accumulators, 32 x 32 heads x 512 tokens x 128 x 4 B = 256 MiB") {
  // Llama-3.1-8B at 512 decode tokens, vLLM's 32 splits for full graphs (flash_attn.py, envs.py).
  model::ForwardOptions full;
  full.attention_splits = 32;
  const model::AllocationProgram p = model::forward_program(model::catalogue_model("Llama-3.1-8B"),
                                                            model::ForwardShape{512, 512, 512, 1}, full);
  Bytes out_accum = 0, lse_accum = 0;
  int layers_with_accum = 0;
  for (const model::ProgramOp& op : p.ops) {
    if (op.kind != model::OpKind::alloc) continue;
    if (op.tensor == model::Tensor::attn_out_accum) out_accum = op.bytes, ++layers_with_accum;
    if (op.tensor == model::Tensor::softmax_lse_accum) lse_accum = op.bytes;
  }
  CHECK(out_accum == 256 * MiB);
  CHECK(lse_accum == 2 * MiB);  // 32 x 32 x 512 x 4 B
  CHECK(layers_with_accum == 32);
  // Transient: the program's peak grows by the accumulators of one layer, not of all 32.
  const Bytes plain = model::program_figures(model::forward_program(model::catalogue_model("Llama-3.1-8B"),
                                                                    model::ForwardShape{512, 512, 512, 1}))
                          .peak;
  CHECK(model::program_figures(p).peak <= plain + 258 * MiB);
  CHECK(model::program_figures(p).peak > plain + 256 * MiB - 64 * MiB);
}

TEST_CASE("vLLM full graphs on Hopper hold FA3's accumulators in the pool, and on an A100 (FA2) do not") {
  // The largest full graph is min(max_num_seqs, 512) = 256 sequences here: 32 x 32 x 256 x 132 x 4 B.
  VllmConfig c;
  c.max_num_seqs = 256;
  const Bytes accum = Bytes{32} * 32 * 256 * (128 + 1) * 4;  // 129 MiB
  StartupResult h100 = vllm_startup(headroom::engine::test::on("h100-sxm-80gb"), c);
  StartupResult a100 = vllm_startup(headroom::engine::test::on("a100-80gb"), c);
  REQUIRE(h100.ok);
  REQUIRE(a100.ok);
  CHECK(h100.bytes.graph_pool >= accum);
  CHECK(a100.bytes.graph_pool < accum);
  CHECK(h100.bytes.graph_pool - a100.bytes.graph_pool >= 128 * MiB);
}

TEST_CASE("SGLang's decode graphs copy their logits into one fp32 [max_bs, vocab] buffer made before capture") {
  StartupResult r = sglang_startup(headroom::engine::test::on("h100-sxm-80gb"), SglangConfig{});
  REQUIRE(r.ok);
  REQUIRE(!r.graph_batch_sizes.empty());
  CHECK(r.graph_computes_logits);
  // next_token_logits_buffer: max_bs x 128,256 x 4 B, outside the pool (cuda_graph_runner.py).
  const Bytes buffer = static_cast<Bytes>(r.graph_batch_sizes.back()) * 128256 * 4;
  // (a block keeps the rest of its 2 MiB-rounded segment when that rest is under 1 MiB)
  bool found = false;
  for (const alloc::Block* b : r.memory.engine_buffers)
    found = found || (b->size >= buffer && b->size < buffer + MiB && b->pool->owner_private_pool == nullptr);
  CHECK(found);
  // No graph keeps logits of its own.
  for (int bs : r.graph_batch_sizes)
    CHECK(r.memory.slots->persistent(model::persistent_key(model::Tensor::logits_fp32, bs)) == nullptr);
}

TEST_CASE("LightLLM keeps each decode graph's fp32 [bs, vocab] logits in the pool") {
  const LightllmConfig c;
  StartupResult r = lightllm_startup(headroom::engine::test::on("h100-sxm-80gb"), c);
  REQUIRE(r.ok);
  REQUIRE(!r.graph_batch_sizes.empty());
  CHECK(r.graph_computes_logits);
  // cuda_graph.py: self.graph[bs] = (graph, infer_state, model_output); 128,256 x 4 B = 513,024 B a row.
  Bytes kept = 0;
  for (int bs : r.graph_batch_sizes) {
    const Bytes logits = static_cast<Bytes>(bs) * 513024;
    kept += logits;
    const alloc::Block* b = r.memory.slots->persistent(model::persistent_key(model::Tensor::logits_fp32, bs));
    REQUIRE(b != nullptr);
    CHECK(b->pool->owner_private_pool != nullptr);
    // The block keeps the rest of its segment when that rest is under 1 MiB (no split).
    CHECK(b->size >= logits);
    CHECK(b->size < logits + MiB);
  }
  CHECK(r.bytes.graph_pool >= kept);
}

TEST_CASE("a replayed graph that made the logits leaves the sampler only its own buffers") {
  const model::ModelConfig m = model::catalogue_model("Llama-3.1-8B");
  model::SamplerOptions greedy;
  greedy.kind = model::SamplerKind::greedy;
  model::SamplerOptions from_graph = greedy;
  from_graph.logits_from_graph = true;
  const model::AllocationProgram eager = model::sampler_program(m, 64, 1, greedy);
  const model::AllocationProgram replay = model::sampler_program(m, 64, 1, from_graph);
  // argmax's int64 [64] ids alone; eagerly also hidden rows, bf16 logits and the fp32 copy.
  CHECK(model::program_figures(replay).peak == 64 * 8);
  CHECK(model::program_figures(eager).peak == 64 * 4096 * 2 + 64 * 128256 * 2 + 64 * 128256 * 4 + 64 * 8);
}
