// The eager (plain-PyTorch) activation program against the real H100 recording it mirrors:
// ../shared/gpu/record_serving.py's Llama-3.1-8B-shaped decoder (8 layers, bf16, a 20 GiB paged KV
// tensor) serving its seeded random prefill/decode stream, recorded as whatif_default_s33 under
// PyTorch 2.11's default allocator configuration. The step stream is the script's own, regenerated
// here with Python's random.Random(33) ported exactly (MT19937, init_by_array, _randbelow, sample).
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/allocator/caching_allocator.hpp"
#include "sim/core/error.hpp"
#include "sim/device/device.hpp"
#include "sim/model/catalogue.hpp"
#include "sim/model/eager_forward_program.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom;
using namespace headroom::model;

namespace {

// CPython's Modules/_randommodule.c: MT19937 seeded by init_by_array with the seed's 32-bit words.
class PythonRandom {
 public:
  explicit PythonRandom(std::uint32_t seed) {
    init_genrand(19650218u);
    std::uint32_t i = 1, j = 0;
    const std::uint32_t key[1] = {seed};
    for (int k = kN; k; --k) {
      mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525u)) + key[j] + j;
      ++i, ++j;
      if (i >= kN) mt_[0] = mt_[kN - 1], i = 1;
      if (j >= 1) j = 0;
    }
    for (int k = kN - 1; k; --k) {
      mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941u)) - i;
      ++i;
      if (i >= kN) mt_[0] = mt_[kN - 1], i = 1;
    }
    mt_[0] = 0x80000000u;
  }
  // random.random(): 53 bits from two draws.
  double random() {
    std::uint32_t a = next() >> 5, b = next() >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
  }
  // _randbelow_with_getrandbits(n): k = n.bit_length() bits, redrawn while >= n.
  std::int64_t below(std::int64_t n) {
    int k = 0;
    while ((std::int64_t{1} << k) <= n) ++k;
    std::int64_t r = next() >> (32 - k);
    while (r >= n) r = next() >> (32 - k);
    return r;
  }
  std::int64_t randint(std::int64_t a, std::int64_t b) { return a + below(b - a + 1); }
  // random.sample(range(n), k).
  std::vector<std::int64_t> sample(std::int64_t n, std::int64_t k) {
    std::vector<std::int64_t> result(static_cast<std::size_t>(k));
    std::int64_t setsize = 21;
    if (k > 5) setsize += static_cast<std::int64_t>(std::pow(4.0, std::ceil(std::log(static_cast<double>(k) * 3.0) / std::log(4.0))));
    if (n <= setsize) {
      std::vector<std::int64_t> pool(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) pool[i] = i;
      for (std::int64_t i = 0; i < k; ++i) {
        std::int64_t j = below(n - i);
        result[i] = pool[j];
        pool[j] = pool[n - i - 1];
      }
    } else {
      std::vector<bool> selected(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < k; ++i) {
        std::int64_t j = below(n);
        while (selected[j]) j = below(n);
        selected[j] = true;
        result[i] = j;
      }
    }
    return result;
  }

 private:
  static constexpr int kN = 624, kM = 397;
  void init_genrand(std::uint32_t s) {
    mt_[0] = s;
    for (int i = 1; i < kN; ++i) mt_[i] = 1812433253u * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + static_cast<std::uint32_t>(i);
    index_ = kN;
  }
  std::uint32_t next() {
    if (index_ >= kN) {
      for (int i = 0; i < kN; ++i) {
        std::uint32_t y = (mt_[i] & 0x80000000u) | (mt_[(i + 1) % kN] & 0x7fffffffu);
        mt_[i] = mt_[(i + kM) % kN] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
      }
      index_ = 0;
    }
    std::uint32_t y = mt_[index_++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
  }
  std::array<std::uint32_t, kN> mt_{};
  int index_ = kN;
};

constexpr std::int64_t kScriptBlock = 16;

// record_serving.py's step loop (MODE serve): prefill with probability 0.3 (or when nothing runs),
// else a decode batch sampled from the running requests; requests finish with probability 0.03 or
// past 4000 tokens of context. Only block counts matter: tables are handed out by count.
std::vector<std::vector<EagerSequence>> script_steps(std::uint32_t seed, int steps, std::int64_t num_blocks) {
  PythonRandom rng(seed);
  std::int64_t free_blocks = num_blocks;
  struct Running {
    std::int64_t context, blocks;
  };
  std::vector<Running> running;
  std::vector<std::vector<EagerSequence>> out;
  for (int step = 0; step < steps; ++step) {
    bool prefill = rng.random() < 0.3 || running.empty();
    std::vector<EagerSequence> seqs;
    if (prefill) {
      std::int64_t nseq = rng.randint(1, 8), budget = rng.randint(64, 8192);
      std::int64_t per = std::max<std::int64_t>(1, budget / nseq);
      std::vector<Running> added;
      for (std::int64_t i = 0; i < nseq; ++i) {
        std::int64_t need = (per + kScriptBlock - 1) / kScriptBlock + 64;
        if (free_blocks < need) break;
        free_blocks -= need;
        seqs.push_back({per, 0});
        added.push_back({per, need});
      }
      running.insert(running.end(), added.begin(), added.end());
    } else {
      std::int64_t n = static_cast<std::int64_t>(running.size());
      std::vector<std::int64_t> batch = rng.sample(n, std::min(n, rng.randint(1, 64)));
      for (std::int64_t i : batch)
        if (running[i].context + 1 <= running[i].blocks * kScriptBlock) seqs.push_back({1, running[i].context});
      if (!seqs.empty())
        for (std::int64_t i : batch) ++running[i].context;
    }
    if (!seqs.empty()) out.push_back(std::move(seqs));
    std::vector<Running> keep;
    for (const Running& r : running) {
      if (rng.random() < 0.03 || r.context > 4000)
        free_blocks += r.blocks;
      else
        keep.push_back(r);
    }
    running = std::move(keep);
  }
  return out;
}

ModelConfig script_model() {
  ModelConfig m = catalogue_model("Llama-3.1-8B");
  m.layers = 8;  // record_serving.py layers=8
  return m;
}

}  // namespace

TEST_CASE("eager program: the ported step stream is record_serving.py's for seed 33") {
  // 2 * L * BLOCK * KVH * D * 2 bytes per block, 20 GiB of them: 40960 blocks.
  auto steps = script_steps(33, 150, 40960);
  // From the script's own generator under CPython (steps with sequences; 38 prefills): the first is
  // 4 × 1689 prefill tokens, the second decodes those 4 at context 1689, the sixth is 2 × 522.
  REQUIRE(steps.size() == 150);
  CHECK(steps[0].size() == 4);
  CHECK(steps[0][0].new_tokens == 1689);
  CHECK(steps[1].size() == 4);
  CHECK(steps[1][0].context == 1689);
  CHECK(steps[5].size() == 2);
  CHECK(steps[5][0].new_tokens == 522);
  CHECK(steps[7].size() == 8);
  CHECK(steps[8].size() == 12);
  int prefills = 0;
  for (const auto& s : steps) prefills += !eager_step_is_decode(s);
  CHECK(prefills == 38);
}

TEST_CASE("eager program: record_serving.py's stream fragments the allocator as the H100 recording did") {
  // whatif_default_s33.meta.json (PyTorch 2.11, H100 80GB HBM3, default PYTORCH_CUDA_ALLOC_CONF).
  // Skipped where ../shared/gpu is absent, like every test of those recordings.
  (void)test::gpu_file("h100-2026-11-25/recordings/whatif_default_s33.meta.json");
  constexpr Bytes kPeakReserved = 32105299968, kPeakAllocated = 28943613952;
  constexpr std::int64_t kSegments = 27;
  // From the recording's trace: allocated 28941057192 B when reserved reached its peak, i.e.
  // 3164242776 B (2.95 GiB) reserved but unallocated then; 5005762560 B (4.66 GiB) at the end.
  constexpr Bytes kAllocatedAtPeakReserved = 28941057192, kAllocatedAtEnd = 27099537408;

  device::DeviceSpec spec;
  spec.total = 85017493504;  // mem_get_info()[1]
  device::Device gpu(spec);
  alloc::CachingAllocator allocator(gpu);
  const ModelConfig m = script_model();
  const Bytes e = 2;  // bf16
  std::vector<alloc::Block*> weights;
  // w(*shape) = torch.randn(...) * 0.02: the product is kept, the randn dropped.
  auto w = [&](std::int64_t rows, std::int64_t cols) {
    alloc::Block* r = allocator.malloc(static_cast<Bytes>(rows * cols) * e);
    weights.push_back(allocator.malloc(static_cast<Bytes>(rows * cols) * e));
    allocator.free(r);
  };
  auto ones = [&](std::int64_t n) { weights.push_back(allocator.malloc(static_cast<Bytes>(n) * e)); };
  const std::int64_t H = m.hidden, I = m.intermediate, D = m.head_dim, Q = m.heads * D, KV = m.kv_heads * D;
  w(m.vocab, H);
  for (int l = 0; l < m.layers; ++l) {
    ones(H);
    w(Q + 2 * KV, H);
    w(H, Q);
    ones(H);
    w(2 * I, H);
    w(H, I);
  }
  ones(H);
  w(m.vocab, H);
  const Bytes per_block = static_cast<Bytes>(2 * m.layers * kScriptBlock * KV) * e;
  const std::int64_t blocks = static_cast<std::int64_t>((20 * GiB) / per_block);
  weights.push_back(allocator.malloc(static_cast<Bytes>(blocks) * per_block));

  // The programs' ops straight through the allocator, to see the moment reserved memory peaks.
  std::vector<alloc::Block*> live;
  std::vector<std::pair<std::uint32_t, alloc::Block*>> persistent;
  Bytes peak_reserved = 0, allocated_at_peak_reserved = 0;
  for (const auto& step : script_steps(33, 150, blocks)) {
    const AllocationProgram program = eager_step_program(m, step);
    REQUIRE(check_program(program).empty());
    live.assign(program.slots, nullptr);
    for (const ProgramOp& op : program.ops) {
      if (op.kind == OpKind::free) {
        allocator.free(live[op.slot]);
        continue;
      }
      if (op.persistent) {
        bool held = false;
        for (const auto& [key, block] : persistent) held = held || key == op.slot;
        if (!held) persistent.emplace_back(op.slot, allocator.malloc(op.bytes));
        continue;
      }
      live[op.slot] = allocator.malloc(op.bytes);
      if (allocator.reserved_bytes() > peak_reserved) {
        peak_reserved = allocator.reserved_bytes();
        allocated_at_peak_reserved = allocator.allocated_bytes();
      }
    }
  }
  const alloc::AllocatorStats& stats = allocator.stats();
  // Exact: the program makes the script's large-pool tensors in its order and sizes, and the
  // allocator model is exact on replays of these recordings (docs/replay-and-allocator.md).
  CHECK(static_cast<Bytes>(stats.reserved_bytes[alloc::kAll].peak) == kPeakReserved);
  CHECK(peak_reserved == kPeakReserved);
  CHECK(static_cast<Bytes>(stats.allocated_bytes[alloc::kAll].peak) == kPeakAllocated);
  CHECK(stats.segment[alloc::kAll].current == kSegments);
  CHECK(allocator.allocated_bytes() == kAllocatedAtEnd);
  // Reserved but unallocated when reserved memory peaked: within 64 KiB of the recording's 2.95 GiB
  // (the multinomial's and SDPA's sub-512-byte scratch tensors are left out of the program).
  const Bytes gap = peak_reserved - allocated_at_peak_reserved, real_gap = kPeakReserved - kAllocatedAtPeakReserved;
  CHECK(gap <= real_gap + 64 * KiB);
  CHECK(gap + 64 * KiB >= real_gap);
  // And at the end, between steps: 4.66 GiB cached, free in blocks the next step's shapes may not fit.
  CHECK(allocator.reserved_bytes() - allocator.allocated_bytes() == 5005762560);
}

TEST_CASE("eager program: decode gathers every sequence's K/V padded to the longest table") {
  const ModelConfig m = script_model();
  // Two decodes at contexts 100 and 1689: the table is ceil(1690 / 16) = 106 blocks wide, S = 1696,
  // so K is gathered as [2, 1696, 8, 128] bf16 = 6946816 B and its heads repeated to
  // [2, 1696, 32, 128] = 27787264 B, in every layer, whatever the shorter sequence needs.
  const std::vector<EagerSequence> decode = {{1, 100}, {1, 1689}};
  REQUIRE(eager_step_is_decode(decode));
  const AllocationProgram p = eager_step_program(m, decode);
  CHECK(check_program(p).empty());
  int gathers = 0, repeats = 0;
  for (const ProgramOp& op : p.ops) {
    if (op.kind != OpKind::alloc || op.layer != 3) continue;
    if (op.tensor == Tensor::kv_gather) gathers += op.bytes == 6946816;
    if (op.tensor == Tensor::kv_repeat) repeats += op.bytes == 27787264;
  }
  CHECK(gathers == 2);
  CHECK(repeats == 2);
  // A prefill of 2 × 1000 tokens gathers per sequence: [63 × 16, 8, 128] and [1000, 32, 128].
  const std::vector<EagerSequence> prefill = {{1000, 0}, {1000, 0}};
  const AllocationProgram q = eager_step_program(m, prefill);
  const ProgramFigures f = program_figures(q);
  CHECK(f.persistent == kCublasWorkspaceHopper);
  int per_seq = 0;
  for (const ProgramOp& op : q.ops)
    per_seq += op.kind == OpKind::alloc && op.layer == 0 && op.tensor == Tensor::kv_repeat && op.bytes == 8192000;
  CHECK(per_seq == 4);
}

TEST_CASE("eager program: bad steps are clear errors") {
  const ModelConfig m = script_model();
  CHECK_THROWS_WITH(eager_step_program(m, std::vector<EagerSequence>{}), "seqs: expected at least 1 sequence, got 0");
  CHECK_THROWS_WITH(eager_step_program(m, std::vector<EagerSequence>{{4, 0}, {0, 7}}),
                    "seqs[1].new_tokens: expected at least 1, got 0");
  CHECK_THROWS_WITH(eager_step_program(m, std::vector<EagerSequence>{{1, -1}}),
                    "seqs[0].context: expected 0 to 131072 (max_position_embeddings), got -1");
  EagerOptions o;
  o.block_size = 0;
  CHECK_THROWS_WITH(eager_step_program(m, std::vector<EagerSequence>{{1, 5}}, o),
                    "block_size: expected at least 1, got 0");
  CHECK_THROWS_WITH(eager_step_program(catalogue_model("Qwen3-30B-A3B"), std::vector<EagerSequence>{{1, 5}}),
                    "eager program: Qwen3-30B-A3B is not a dense decoder (MoE and MLA models have no eager program)");
}

TEST_CASE("eager program: SGLang's torch_native attention gathers each request's K/V for its whole length") {
  const ModelConfig m = catalogue_model("Llama-3.1-8B");
  EagerOptions o;
  o.path = EagerPath::sglang_torch_native;
  o.context_len = 131072;
  SamplerOptions greedy;
  greedy.kind = SamplerKind::greedy;
  // An extend of 1000 new tokens after a 3000-token cached prefix: per layer, a query buffer
  // [32, 4000, 128] bf16 = 32768000 B, the req_to_token row 131072 × 4 B, K and V [4000, 8, 128]
  // = 8192000 B each, SDPA's output as long as the query buffer and its lse [32, 4000] fp32.
  const std::vector<EagerSequence> extend = {{1000, 3000}};
  const AllocationProgram p = eager_step_program(m, extend, o, greedy);
  CHECK(check_program(p).empty());
  std::vector<Bytes> layer5;
  for (const ProgramOp& op : p.ops)
    if (op.kind == OpKind::alloc && op.layer == 5) layer5.push_back(op.bytes);
  // qkv [1000, 6144], attn_out [1000, 4096], the loop, o_proj, gate_up, act.
  const std::vector<Bytes> expected = {12288000, 8192000,  32768000, 524288,  8192000, 8192000,
                                       32768000, 512000,   8192000,  57344000, 28672000, 8192000};
  CHECK(layer5 == expected);
  // No cuBLAS workspace from the allocator: SGLang's start-up creates it outside (§5).
  CHECK(program_figures(p).persistent == 0);
  // A decode of two requests: K/V of 101 and 2001 tokens each, a [1, 32, 1, 128] output.
  const std::vector<EagerSequence> decode = {{1, 100}, {1, 2000}};
  const AllocationProgram d = eager_step_program(m, decode, o, greedy);
  int gathers = 0;
  for (const ProgramOp& op : d.ops)
    gathers += op.kind == OpKind::alloc && op.layer == 0 && op.tensor == Tensor::kv_gather &&
               (op.bytes == 101 * 2048 || op.bytes == 2001 * 2048);
  CHECK(gathers == 4);
  // A request longer than the context length cannot be in the pool.
  CHECK_THROWS_WITH(eager_step_program(m, std::vector<EagerSequence>{{10, 131070}}, o, greedy),
                    "seqs[0]: 131080 tokens do not fit the context length of 131072");
}
