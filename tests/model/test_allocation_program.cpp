// Forward-pass and sampler allocation programs against the worked numbers of
// docs/serving-memory-model.md §4 (dense §4a, MoE §4b, MLA §4c, sampler §4a), and the runner that plays
// them through the caching allocator model.
#include <catch2/catch.hpp>

#include "sim/allocator/caching_allocator.hpp"
#include "sim/allocator/size_rules.hpp"
#include "sim/core/error.hpp"
#include "sim/model/catalogue.hpp"
#include "sim/model/program_runner.hpp"
#include "sim/model/step_program.hpp"
#include "tests/support/allocation_counter.hpp"

using namespace headroom;
using namespace headroom::model;

namespace {

constexpr Bytes kPiB = Bytes{1} << 50;

// A device large enough that nothing fails, unless a capacity is given.
struct Gpu {
  explicit Gpu(Bytes total = kPiB) : device(spec(total)), allocator(device) {}
  static device::DeviceSpec spec(Bytes total) {
    device::DeviceSpec s;
    s.total = total;
    return s;
  }
  device::Device device;
  alloc::CachingAllocator allocator;
};

// Requested bytes of the first allocation of `tensor` in `layer`.
Bytes first_alloc(const AllocationProgram& p, Tensor tensor, std::int32_t layer = 0) {
  for (const ProgramOp& op : p.ops)
    if (op.kind == OpKind::alloc && op.tensor == tensor && op.layer == layer) return op.bytes;
  FAIL("no allocation of " << tensor_name(tensor) << " in layer " << layer);
  return 0;
}

int count_allocs(const AllocationProgram& p, Tensor tensor, std::int32_t layer) {
  int n = 0;
  for (const ProgramOp& op : p.ops) n += op.kind == OpKind::alloc && op.tensor == tensor && op.layer == layer;
  return n;
}

// Most requested bytes live right after an allocation of `tensor` (any layer).
Bytes live_after(const AllocationProgram& p, Tensor tensor) {
  std::vector<Bytes> size(p.slots, 0);
  Bytes live = 0, most = 0;
  for (const ProgramOp& op : p.ops) {
    if (op.kind == OpKind::alloc) {
      live += op.bytes;
      if (!op.persistent) size[op.slot] = op.bytes;
      if (op.tensor == tensor) most = std::max(most, live);
    } else {
      live -= size[op.slot];
    }
  }
  return most;
}

ForwardShape prefill(std::int64_t tokens, int tp = 1) { return {tokens, 1, 0, tp}; }
ForwardShape decode(std::int64_t seqs, int tp = 1) { return {seqs, seqs, seqs, tp}; }

}  // namespace

TEST_CASE("Llama-3.1-8B prefill of 8192 tokens peaks at 800 MiB of activations (§4a)") {
  ModelConfig llama = catalogue_model("Llama-3.1-8B");
  AllocationProgram p = forward_program(llama, prefill(8192));
  CHECK(check_program(p).empty());
  // §4a's tensors: residual+hidden 128 MiB; qkv 96; attn_out 64; o_proj 64; gate_up 448; act 224; down 64.
  CHECK(first_alloc(p, Tensor::residual, kNoLayer) + first_alloc(p, Tensor::hidden, kNoLayer) == 128 * MiB);
  CHECK(first_alloc(p, Tensor::qkv) == 96 * MiB);
  CHECK(first_alloc(p, Tensor::attn_out) == 64 * MiB);
  CHECK(first_alloc(p, Tensor::softmax_lse) == 32 * 8192 * 4);  // FA lse [Hq, T] fp32, 1 MiB
  CHECK(first_alloc(p, Tensor::o_proj) == 64 * MiB);
  CHECK(first_alloc(p, Tensor::gate_up) == 448 * MiB);
  CHECK(first_alloc(p, Tensor::act) == 224 * MiB);
  CHECK(first_alloc(p, Tensor::down) == 64 * MiB);

  // T × (4H + 6I) = 8192 × 102,400 B = 838,860,800 B = 800 MiB exactly, reached at `act`.
  ProgramFigures f = program_figures(p);
  CHECK(f.peak == 838'860'800);
  CHECK(f.peak == 800 * MiB);
  CHECK(p.ops[f.peak_op].tensor == Tensor::act);
  for (int l = 0; l < 32; ++l) CHECK(f.layer_peak[static_cast<std::size_t>(l)] == 800 * MiB);
  // Attention phase: residual + hidden + qkv + attn_out + o_proj = 44 KiB per token.
  CHECK(live_after(p, Tensor::o_proj) == 8192 * 44 * KiB);

  // Through the allocator: every size is a multiple of 512 B, so allocated peaks at the same bytes.
  Gpu gpu;
  SlotTable slots;
  ProgramRun r = run_program(gpu.allocator, p, slots);
  REQUIRE(r.completed);
  CHECK(r.peak_allocated == 838'860'800);
  CHECK(r.peak_allocated == Approx(800.0 * MiB).epsilon(0.03));
  CHECK(r.peak_reserved >= r.peak_allocated);
  CHECK(r.end_allocated == 0);
  CHECK(r.allocations == f.allocations);
  REQUIRE(r.layers.size() == 32);
  CHECK(r.layers[0].entry_allocated == 128 * MiB);
  CHECK(r.layers[0].peak_allocated == 800 * MiB);
  CHECK(p.ops[r.layers[31].peak_op].tensor == Tensor::act);
}

TEST_CASE("Llama-3.1-8B decode of 256 sequences needs 25 MiB of forward activations (§4a)") {
  AllocationProgram p = forward_program(catalogue_model("Llama-3.1-8B"), decode(256));
  CHECK(check_program(p).empty());
  CHECK(program_figures(p).peak == 25 * MiB);  // 256 × 100 KiB
  Gpu gpu;
  SlotTable slots;
  CHECK(run_program(gpu.allocator, p, slots).peak_allocated == 25 * MiB);
}

TEST_CASE("eager liveness keeps each layer's input: 108 KiB per token, as measured in vllm#10517") {
  ForwardOptions eager;
  eager.caller_holds_layer_input = true;
  AllocationProgram p = forward_program(catalogue_model("Llama-3.1-8B"), prefill(8192), eager);
  CHECK(check_program(p).empty());
  CHECK(program_figures(p).peak == 8192 * 108 * KiB);  // T × (6H + 6I)
}

TEST_CASE("FlashInfer keeps a persistent workspace: 256 MiB in vLLM, 384 MiB in SGLang, none known for LightLLM") {
  CHECK(flashinfer_workspace_bytes(Engine::vllm) == 256 * MiB);
  CHECK(flashinfer_workspace_bytes(Engine::sglang) == 384 * MiB);
  CHECK_THROWS_WITH(flashinfer_workspace_bytes(Engine::lightllm),
                    "attention backend flashinfer: no FlashInfer workspace size is known for lightllm");
  ForwardOptions o;
  o.attention = AttentionBackend::flashinfer;
  o.attention_workspace = flashinfer_workspace_bytes(Engine::sglang);
  AllocationProgram p = forward_program(catalogue_model("Llama-3.1-8B"), decode(256), o);
  CHECK(check_program(p).empty());
  CHECK(p.persistent == 1);
  CHECK(count_allocs(p, Tensor::softmax_lse, 0) == 0);
  ProgramFigures f = program_figures(p);
  CHECK(f.persistent == 384 * MiB);
  CHECK(f.peak == 384 * MiB + 25 * MiB);

  // The workspace is allocated by the first run only; a rerun finds it held.
  Gpu gpu;
  SlotTable slots;
  ProgramRun first = run_program(gpu.allocator, p, slots);
  CHECK(first.end_allocated == 384 * MiB);
  ProgramRun second = run_program(gpu.allocator, p, slots);
  CHECK(second.persistent_reused == 1);
  CHECK(second.allocations == first.allocations - 1);
  CHECK(second.peak_allocated == 25 * MiB);
  CHECK(second.end_allocated == 0);
  CHECK(slots.persistent_count() == 1);
  slots.release(gpu.allocator);
  CHECK(gpu.allocator.allocated_bytes() == 0);
}

TEST_CASE("fp32 logits of 1024 sequences × 201,088 entries are 785.5 MiB, reported as 786 MiB (vllm#27508)") {
  // The vocabulary of vllm#27508's model (201,088, already a multiple of 64); only the vocabulary,
  // hidden size and dtype matter to the sampler.
  ModelConfig m = catalogue_model("Llama-3.1-8B");
  m.name = "vocab-201088";
  m.vocab = 201088;
  m.hidden = 2880;
  AllocationProgram p = sampler_program(m, 1024, 1, {SamplerKind::greedy});
  CHECK(check_program(p).empty());
  Bytes fp32 = first_alloc(p, Tensor::logits_fp32, kNoLayer);
  CHECK(fp32 == 1024ull * 201088 * 4);
  CHECK(fp32 == 823'656'448);
  CHECK(fp32 * 2 == 1571 * MiB);  // 785.5 MiB
  CHECK(first_alloc(p, Tensor::logits, kNoLayer) == 1024ull * 201088 * 2);

  // On a 1 GiB device the bf16 logits fit and the fp32 copy does not: PyTorch's message rounds the
  // request to its 2 MiB-aligned segment, "Tried to allocate 786.00 MiB".
  Gpu gpu(1 * GiB);
  SlotTable slots;
  ProgramRun r = run_program(gpu.allocator, p, slots);
  CHECK_FALSE(r.completed);
  REQUIRE(r.oom.has_value());
  CHECK(p.ops[r.oom_op].tensor == Tensor::logits_fp32);
  CHECK(r.oom->requested == 823'656'448);
  CHECK(r.oom->alloc_size == 786 * MiB);
  CHECK_THAT(r.oom->message(), Catch::Contains("Tried to allocate 786.00 MiB"));
  // The failed step's tensors are dropped.
  CHECK(gpu.allocator.allocated_bytes() == 0);
}

TEST_CASE("sampler peaks: native 38 B, FlashInfer 14 B, greedy 6 B per sequence and vocabulary entry (§4a)") {
  ModelConfig llama = catalogue_model("Llama-3.1-8B");
  const Bytes N = 1024, V = 128256, rows = N * 4096 * 2;  // + the [N, H] hidden rows sampled
  AllocationProgram native = sampler_program(llama, 1024);
  CHECK(check_program(native).empty());
  Bytes peak = program_figures(native).peak;
  // Inside logits.sort: bf16 logits 2 + fp32 copy 4 + sorted values 4 + indices 8 + the stable
  // sort's reverse indices 8 and cub's alternate buffers 4 + 8 (their 256 B alignments are whole
  // here, 128,256 = 501 × 256, so cub adds only its 255 B of slack).
  CHECK(peak == 38 * N * V + rows + 255);
  CHECK(peak == Approx(4.65 * GiB).epsilon(0.02));  // §4a: ≈ 4.65 GiB at the vLLM profile's N = 1024
  CHECK(native.ops[program_figures(native).peak_op].tensor == Tensor::sort_cub_temp);

  // After the sort the masks and the scattered copy peak at 28 B (24 B scattering in place), so
  // the sort's moment is the peak either way; 127 rows take the full-sort path, not modelled.
  SamplerOptions in_place;
  in_place.scatter_in_place = true;
  CHECK(program_figures(sampler_program(llama, 1024, 1, in_place)).peak == 38 * N * V + rows + 255);
  CHECK(program_figures(sampler_program(llama, 127)).peak == 28 * 127 * V + 127 * 4096 * 2);
  CHECK(program_figures(sampler_program(llama, 1024, 1, {SamplerKind::flashinfer})).peak == 14 * N * V + rows + N * 4);
  CHECK(program_figures(sampler_program(llama, 1024, 1, {SamplerKind::greedy})).peak == 6 * N * V + rows + N * 8);

  // Through the allocator the native path stays within a fraction of a percent of its bytes.
  Gpu gpu;
  SlotTable slots;
  ProgramRun r = run_program(gpu.allocator, native, slots);
  CHECK(r.peak_allocated == Approx(static_cast<double>(peak)).epsilon(0.002));
}

TEST_CASE("the native sampler's sort asks for 1.74 GiB of cub scratch at 1,024 rows of 152,064 (vllm#15105)") {
  // vllm#15105 / vllm#14452 (vLLM 0.8.x V1, Qwen2.5's 152,064-entry vocabulary, 1,024 dummy
  // requests): "Tried to allocate 1.74 GiB" inside logits.sort. PyTorch SortStable.cu
  // segmented_sort_pairs: reverse_indices (int64), then cub's alternate fp32 keys and int64 values,
  // each aligned to 256 B, + 255 B (cub 2.1.0 AliasTemporaries).
  ModelConfig m = catalogue_model("Llama-3.1-8B");
  m.name = "vocab-152064";
  m.vocab = 152064;
  AllocationProgram p = sampler_program(m, 1024);
  CHECK(check_program(p).empty());
  CHECK(first_alloc(p, Tensor::sort_reverse_indices, kNoLayer) == 1024ull * 152064 * 8);
  const Bytes cub = first_alloc(p, Tensor::sort_cub_temp, kNoLayer);
  CHECK(cub == 1024ull * 152064 * 12 + 255);  // 152,064 = 594 × 256: both buffers already aligned
  CHECK(cub == 1'868'562'687);
  // The order inside the sort: values, indices, reverse_indices, cub's storage; cub's goes first.
  std::vector<Tensor> order;
  for (const ProgramOp& op : p.ops)
    if (op.kind == OpKind::alloc && (op.tensor == Tensor::sort_values || op.tensor == Tensor::sort_indices ||
                                     op.tensor == Tensor::sort_reverse_indices || op.tensor == Tensor::sort_cub_temp))
      order.push_back(op.tensor);
  CHECK(order == std::vector<Tensor>{Tensor::sort_values, Tensor::sort_indices, Tensor::sort_reverse_indices,
                                     Tensor::sort_cub_temp});
  // The 255 B tip it past 891 × 2 MiB: the segment is 892 × 2 MiB = 1.742 GiB, PyTorch's "1.74 GiB"
  // (its OOM message prints the segment size, get_allocation_size).
  const alloc::AllocatorConfig config;
  CHECK(alloc::segment_size_for(alloc::round_size(cub, config), config) == 892 * 2 * MiB);

  // A row whose buffers need the alignment: 129 rows of 4,097 → 2,114,052 B of keys round to
  // 2,114,304 and 4,228,104 B of values to 4,228,352.
  ModelConfig odd = m;
  odd.vocab = 4097;
  CHECK(first_alloc(sampler_program(odd, 129), Tensor::sort_cub_temp, kNoLayer) == 2'114'304 + 4'228'352 + 255);

  // 127 rows take PyTorch's full-sort path (not modelled), a 4,096-entry row the in-place small
  // sort: neither allocates this scratch.
  CHECK(count_allocs(sampler_program(m, 127), Tensor::sort_cub_temp, kNoLayer) == 0);
  ModelConfig small = m;
  small.vocab = 4096;
  CHECK(count_allocs(sampler_program(small, 1024), Tensor::sort_cub_temp, kNoLayer) == 0);

  // More than INT_MAX elements sort in passes of whole rows, each with its own scratch, freed
  // before the next: 600,000 entries a row → 3,579 rows a pass; 4,000 rows → 3,579 + 421.
  ModelConfig wide = m;
  wide.vocab = 600000;
  AllocationProgram two = sampler_program(wide, 4000);
  CHECK(check_program(two).empty());
  std::vector<Bytes> reverse;
  for (const ProgramOp& op : two.ops)
    if (op.kind == OpKind::alloc && op.tensor == Tensor::sort_reverse_indices) reverse.push_back(op.bytes);
  CHECK(reverse == std::vector<Bytes>{3579ull * 600000 * 8, 421ull * 600000 * 8});
}

TEST_CASE("sampler at TP 2 gathers the vocabulary-parallel logits") {
  ModelConfig llama = catalogue_model("Llama-3.1-8B");
  AllocationProgram p = sampler_program(llama, 256, 2);
  CHECK(check_program(p).empty());
  CHECK(first_alloc(p, Tensor::logits_partial, kNoLayer) == 256ull * 64128 * 2);
  CHECK(first_alloc(p, Tensor::logits_gather, kNoLayer) == 256ull * 128256 * 2);
  CHECK(first_alloc(p, Tensor::logits, kNoLayer) == 256ull * 128256 * 2);
  CHECK(first_alloc(p, Tensor::logits_fp32, kNoLayer) == 256ull * 128256 * 4);
}

TEST_CASE("Qwen3-30B-A3B MoE prefill of 8192 tokens peaks near 56 KiB per token, ≈450 MiB (§4b)") {
  ModelConfig qwen = catalogue_model("Qwen3-30B-A3B");
  AllocationProgram p = forward_program(qwen, prefill(8192));
  CHECK(check_program(p).empty());
  // Attention: qkv 10 KiB, q/k norms 8 + 1 KiB, attn_out 8 KiB (> H), o_proj 4 KiB per token.
  CHECK(first_alloc(p, Tensor::qkv) == 8192 * 10 * KiB);
  CHECK(first_alloc(p, Tensor::q_norm) == 8192 * 8 * KiB);
  CHECK(first_alloc(p, Tensor::k_norm) == 8192 * 1 * KiB);
  CHECK(first_alloc(p, Tensor::attn_out) == 8192 * 8 * KiB);
  CHECK(live_after(p, Tensor::o_proj) == 8192 * 39 * KiB);
  // fused_experts with N = 2·768, K = 2048, top-8: cache13 = 8·2048·2 B = 32 KiB, cache2 = 8·768·2 B
  // = 12 KiB per token; router logits [T, 128] bf16; top-k weights fp32 and ids int32 [T, 8].
  CHECK(first_alloc(p, Tensor::moe_cache13) == 8192 * 32 * KiB);
  CHECK(first_alloc(p, Tensor::moe_cache2) == 8192 * 12 * KiB);
  CHECK(first_alloc(p, Tensor::router_logits) == 8192 * 256);
  CHECK(first_alloc(p, Tensor::topk_weights) == 8192 * 32);
  CHECK(first_alloc(p, Tensor::moe_sorted_token_ids) == (8192 * 8 + 128 * 63) * 4);
  CHECK(first_alloc(p, Tensor::moe_expert_ids) == (8192 * 8 + 128 * 63 + 63) / 64 * 4);
  // torch >= 2.9: the experts write a new [T, H] output (vLLM disable_inplace, vllm#26378):
  // 8 + 4 + 32 + 12 KiB per token plus the routing buffers.
  ProgramFigures f = program_figures(p);
  CHECK(f.peak == 472'682'492);
  CHECK(f.peak == Approx(8192.0 * 56 * KiB).epsilon(0.01));
  CHECK(f.peak == Approx(450.0 * MiB).epsilon(0.01));
  // In place (torch < 2.9) saves the [T, H] output.
  ForwardOptions inplace;
  inplace.moe_output_inplace = true;
  CHECK(program_figures(forward_program(qwen, prefill(8192), inplace)).peak == f.peak - 8192 * 2048 * 2);

  Gpu gpu;
  SlotTable slots;
  ProgramRun r = run_program(gpu.allocator, p, slots);
  CHECK(r.peak_allocated == Approx(static_cast<double>(f.peak)).epsilon(0.001));
}

TEST_CASE("MoE chunking sizes the caches for VLLM_FUSED_MOE_CHUNK_SIZE tokens") {
  ModelConfig qwen = catalogue_model("Qwen3-30B-A3B");
  AllocationProgram p = forward_program(qwen, prefill(65536));
  CHECK(check_program(p).empty());
  CHECK(first_alloc(p, Tensor::moe_cache13) == 32768ull * 8 * 2048 * 2);
  CHECK(first_alloc(p, Tensor::moe_cache2) == 32768ull * 8 * 768 * 2);
  CHECK(count_allocs(p, Tensor::moe_sorted_token_ids, 0) == 2);  // two chunks
  ForwardOptions small;
  small.moe_chunk_tokens = 4096;
  AllocationProgram q = forward_program(qwen, prefill(8192), small);
  CHECK(first_alloc(q, Tensor::moe_cache13) == 4096ull * 8 * 2048 * 2);
  CHECK(count_allocs(q, Tensor::moe_sorted_token_ids, 0) == 2);
  CHECK(program_figures(q).peak < program_figures(forward_program(qwen, prefill(8192))).peak);
}

TEST_CASE("DeepSeek-V3 MLA prefill needs ≈250–270 KiB per token at TP 1 (§4c)") {
  ModelConfig ds = catalogue_model("DeepSeek-V3");
  AllocationProgram p = forward_program(ds, prefill(8192));
  CHECK(check_program(p).empty());
  const Bytes T = 8192;
  CHECK(first_alloc(p, Tensor::mla_qkv_a) == T * (1536 + 576) * 2);  // ≈4 KiB
  CHECK(first_alloc(p, Tensor::mla_q) == T * 48 * KiB);
  CHECK(first_alloc(p, Tensor::mla_kv_b) == T * 64 * KiB);
  CHECK(first_alloc(p, Tensor::mla_k) == T * 48 * KiB);
  CHECK(first_alloc(p, Tensor::mla_v) == T * 32 * KiB);
  CHECK(first_alloc(p, Tensor::attn_out) == T * 32 * KiB);
  CHECK(first_alloc(p, Tensor::o_proj) == T * 14 * KiB);
  // Dense layers 0–2: gate_up 72 KiB, act 36 KiB; MoE layers: cache13 112 KiB, cache2 32 KiB, and
  // the shared expert's MLP (8 + 4 KiB, output 14 KiB).
  CHECK(first_alloc(p, Tensor::gate_up, 0) == T * 72 * KiB);
  CHECK(first_alloc(p, Tensor::act, 2) == T * 36 * KiB);
  CHECK(count_allocs(p, Tensor::moe_cache13, 2) == 0);
  CHECK(first_alloc(p, Tensor::moe_cache13, 3) == T * 112 * KiB);
  CHECK(first_alloc(p, Tensor::moe_cache2, 3) == T * 32 * KiB);
  CHECK(first_alloc(p, Tensor::shared_gate_up, 3) == T * 8 * KiB);
  CHECK(first_alloc(p, Tensor::shared_act, 3) == T * 4 * KiB);

  // Peak in the MHA-path attention: residual + hidden 28 KiB + qkv_a + q + attn_out + kv_b + k + v
  // + lse = 262,784 B per token ≈ 256.6 KiB, ≈2.0 GiB at 8192 tokens.
  ProgramFigures f = program_figures(p);
  CHECK(f.peak == T * 262'784);
  CHECK(f.peak / T >= 250 * KiB);
  CHECK(f.peak / T <= 270 * KiB);
  CHECK(p.ops[f.peak_op].tensor == Tensor::softmax_lse);

  // Padding V to the 192-wide q/k head dim adds 16 KiB per token.
  ForwardOptions pad;
  pad.mla_pad_v = true;
  CHECK(program_figures(forward_program(ds, prefill(8192), pad)).peak == f.peak + T * 16 * KiB);

  // At TP 8 the attention tensors shrink 8× but the MoE caches (K = H) do not.
  AllocationProgram tp8 = forward_program(ds, prefill(8192, 8));
  CHECK(first_alloc(tp8, Tensor::mla_kv_b) == T * 8 * KiB);
  CHECK(first_alloc(tp8, Tensor::mla_qkv_a) == T * (1536 + 576) * 2);  // replicated
  CHECK(first_alloc(tp8, Tensor::moe_cache13, 3) == T * 112 * KiB);
  ProgramFigures f8 = program_figures(tp8);
  CHECK(tp8.ops[f8.peak_op].layer >= 3);  // an MoE layer
  CHECK(f8.layer_peak[0] < f8.layer_peak[3]);

  Gpu gpu;
  SlotTable slots;
  ProgramRun r = run_program(gpu.allocator, p, slots);
  CHECK(r.peak_allocated == Approx(static_cast<double>(f.peak)).epsilon(0.001));
  REQUIRE(r.layers.size() == 61);
}

TEST_CASE("DeepSeek-V3 weight-absorbed decode holds ≈336 KiB per sequence and layer (§4c)") {
  ModelConfig ds = catalogue_model("DeepSeek-V3");
  AllocationProgram p = forward_program(ds, decode(256));
  CHECK(check_program(p).empty());
  const Bytes B = 256;
  // §4c's decode tensors: ql_nope [B,128,512], q_pe [B,128,64], kernel output [B,128,512],
  // · W_UV → [B,128,128], o_proj [B,7168]: 128 + 16 + 128 + 32 + 14 KiB per sequence.
  CHECK(first_alloc(p, Tensor::mla_ql_nope) == B * 128 * KiB);
  CHECK(first_alloc(p, Tensor::mla_q_pe) == B * 16 * KiB);
  CHECK(first_alloc(p, Tensor::mla_decode_kernel_out) == B * 128 * KiB);
  CHECK(first_alloc(p, Tensor::mla_v_up) == B * 32 * KiB);
  CHECK(first_alloc(p, Tensor::o_proj) == B * 14 * KiB);
  CHECK(count_allocs(p, Tensor::mla_kv_b, 0) == 0);  // no prefill tokens
  // The program also holds qkv_a, q and the attention output buffer across the kernel call, and
  // o_proj comes after the decode tensors die: the layer's transient peak is 397,952 B per
  // sequence (388.6 KiB, at v_up), 16% above §4c's rounded ≈336 KiB (B = 256: 97 MiB vs 84 MiB).
  ProgramFigures f = program_figures(p);
  Bytes transient = f.layer_peak[10] - f.layer_entry[10];
  CHECK(transient == B * 397'952);
  CHECK(p.ops[f.layer_peak_op[10]].tensor == Tensor::mla_v_up);
  CHECK(static_cast<double>(transient) == Approx(84.0 * MiB).epsilon(0.2));
}

TEST_CASE("per-layer _decode_out costs 61 × 256 MiB ≈ 15 GiB, a shared one 256 MiB (vLLM #37442, #37799)") {
  ModelConfig ds = catalogue_model("DeepSeek-R1");
  ForwardOptions per_layer;
  per_layer.mla_decode_out = DecodeOutBuffer::per_layer;  // 1024 rows × 128 heads × 512 × 4 B
  AllocationProgram p = forward_program(ds, decode(256), per_layer);
  CHECK(check_program(p).empty());
  CHECK(p.persistent == 61);
  CHECK(first_alloc(p, Tensor::mla_decode_out_buffer, 0) == 256 * MiB);
  CHECK(count_allocs(p, Tensor::mla_decode_kernel_out, 0) == 0);  // the kernel writes the buffer
  ProgramFigures f = program_figures(p);
  CHECK(f.persistent == 61 * 256 * MiB);
  CHECK(f.persistent == Approx(61.0 * 252 * MiB).epsilon(0.02));  // §4c: 61 × ≈252 MiB ≈ 15 GiB
  CHECK(f.persistent == Approx(15.0 * GiB).epsilon(0.02));

  ForwardOptions shared = per_layer;
  shared.mla_decode_out = DecodeOutBuffer::shared;
  AllocationProgram s = forward_program(ds, decode(256), shared);
  CHECK(check_program(s).empty());
  CHECK(s.persistent == 1);
  CHECK(program_figures(s).persistent == 256 * MiB);

  // The profile run is a prefill: forward_mqa never runs, so no buffer exists to be measured.
  CHECK(forward_program(ds, prefill(8192), per_layer).persistent == 0);

  // Through the allocator: the first decode creates them lazily, later steps (any shape) reuse them.
  Gpu gpu;
  SlotTable slots;
  ProgramRun profile = run_program(gpu.allocator, forward_program(ds, prefill(8192), per_layer), slots);
  CHECK(profile.end_allocated == 0);
  ProgramRun first = run_program(gpu.allocator, p, slots);
  CHECK(first.end_allocated == 61 * 256 * MiB);
  ProgramRun next = run_program(gpu.allocator, forward_program(ds, decode(128), per_layer), slots);
  CHECK(next.persistent_reused == 61);
  CHECK(next.end_allocated == 0);
  CHECK(slots.persistent_bytes() == 61 * 256 * MiB);

  CHECK_THROWS_WITH(forward_program(ds, decode(2048), per_layer),
                    "decode_seqs: 2048 decoding sequences do not fit the 1024-row _decode_out buffer");
}

TEST_CASE("mixed MLA steps run the prefill path for prefill tokens and the decode path for decodes") {
  ModelConfig ds = catalogue_model("DeepSeek-V3");
  AllocationProgram p = forward_program(ds, {1024 + 64, 65, 64, 1});
  CHECK(check_program(p).empty());
  CHECK(first_alloc(p, Tensor::mla_q) == 1088ull * 48 * KiB);
  CHECK(first_alloc(p, Tensor::mla_kv_b) == 1024ull * 64 * KiB);
  CHECK(first_alloc(p, Tensor::mla_ql_nope) == 64ull * 128 * KiB);
}

TEST_CASE("every allocation has a matching free except declared persistent buffers") {
  ForwardOptions all;
  all.attention = AttentionBackend::flashinfer;
  all.attention_workspace = kVllmFlashInferWorkspace;
  all.mla_decode_out = DecodeOutBuffer::per_layer;
  for (const std::string& name : catalogue_names()) {
    ModelConfig m = catalogue_model(name);
    for (ForwardShape shape : {prefill(8192), decode(256), ForwardShape{4096 + 100, 101, 100, 1}}) {
      INFO(name << " T=" << shape.tokens);
      CHECK(check_program(forward_program(m, shape)) == "");
      CHECK(check_program(forward_program(m, shape, all)) == "");
      for (SamplerKind k : {SamplerKind::greedy, SamplerKind::native, SamplerKind::flashinfer})
        CHECK(check_program(step_program(m, shape, {}, {k})) == "");
    }
  }
  // The checker finds what a hand-made program gets wrong.
  AllocationProgram bad;
  bad.name = "bad";
  bad.slots = 2;
  bad.ops = {{64, 0, kNoLayer, OpKind::alloc, Tensor::qkv, false}, {64, 1, kNoLayer, OpKind::alloc, Tensor::act, false},
             {0, 1, kNoLayer, OpKind::free, Tensor::act, false}};
  CHECK(check_program(bad) == "op 0 (qkv, layer -1): never freed");
  bad.ops.push_back({0, 1, kNoLayer, OpKind::free, Tensor::act, false});
  CHECK(check_program(bad) == "op 3 (act): slot 1 freed while not live");
}

TEST_CASE("a step keeps the final hidden states alive while it samples") {
  ModelConfig llama = catalogue_model("Llama-3.1-8B");
  ForwardShape shape{8192, 1024, 0, 1};
  AllocationProgram step = step_program(llama, shape);
  CHECK(check_program(step).empty());
  Bytes sampler = program_figures(sampler_program(llama, 1024)).peak;
  CHECK(program_figures(step).peak == 8192ull * 4096 * 2 + sampler);
}

TEST_CASE("running a program twice reuses the cache: same peak, no new segments") {
  ModelConfig llama = catalogue_model("Llama-3.1-8B");
  Gpu gpu;
  SlotTable slots;
  AllocationProgram p = forward_program(llama, prefill(8192));
  ProgramRun a = run_program(gpu.allocator, p, slots);
  std::int64_t segments = gpu.allocator.stats().num_device_alloc;
  ProgramRun b = run_program(gpu.allocator, p, slots);
  CHECK(b.peak_allocated == a.peak_allocated);
  CHECK(b.peak_reserved == 0);
  CHECK(gpu.allocator.stats().num_device_alloc == segments);

  // A decode step's mix of 1–10 MiB requests places differently from an empty cache: the second
  // run adds one 20 MiB segment, from the third on nothing changes.
  Gpu gpu2;
  SlotTable slots2;
  AllocationProgram d = forward_program(llama, decode(256));
  ProgramRun d1 = run_program(gpu2.allocator, d, slots2);
  ProgramRun d2 = run_program(gpu2.allocator, d, slots2);
  ProgramRun d3 = run_program(gpu2.allocator, d, slots2);
  CHECK(d1.peak_allocated == d2.peak_allocated);
  CHECK(d2.peak_allocated == d3.peak_allocated);
  CHECK(d2.peak_reserved == 20 * MiB);
  CHECK(d3.peak_reserved == 0);
}

TEST_CASE("the runner keeps the lowest free device memory, the malloc that set it and free + cached then") {
  // A worked example on a 1 GiB device (no context): every request is a multiple of 2 MiB above
  // 10 MiB, so each new segment is exactly its request (allocator-model.md §2). A (100 MiB) and B
  // (300 MiB) take 400 MiB; A is freed into the cache; D (200 MiB) does not fit A's block and takes a
  // new segment: 1024 − 600 = 424 MiB free, 100 MiB cached but free.
  AllocationProgram p;
  p.slots = 2;
  auto alloc = [&](std::uint32_t slot, Bytes bytes, Tensor t) {
    p.ops.push_back(ProgramOp{bytes, slot, kNoLayer, OpKind::alloc, t, false});
  };
  auto release = [&](std::uint32_t slot) { p.ops.push_back(ProgramOp{0, slot, kNoLayer, OpKind::free, Tensor::hidden, false}); };
  alloc(0, 100 * MiB, Tensor::qkv);
  alloc(1, 300 * MiB, Tensor::gate_up);
  release(0);
  alloc(0, 200 * MiB, Tensor::logits);
  release(1);
  release(0);
  REQUIRE(check_program(p).empty());
  Gpu gpu(1 * GiB);
  SlotTable slots;
  ProgramRun r = run_program(gpu.allocator, p, slots);
  REQUIRE(r.completed);
  CHECK(r.min_device_free == 424 * MiB);
  REQUIRE(r.min_device_free_op.has_value());
  CHECK(*r.min_device_free_op == 3);
  CHECK(r.reserved_at_min_free == 600 * MiB);
  CHECK(r.min_free_or_cached == 524 * MiB);  // 424 free + (600 reserved − 500 allocated); B alone left 624

  // Run again: every request is served from the cache, so no malloc lowers the free memory.
  ProgramRun again = run_program(gpu.allocator, p, slots);
  CHECK(again.min_device_free == 424 * MiB);
  CHECK_FALSE(again.min_device_free_op.has_value());
  CHECK(again.min_free_or_cached == 524 * MiB);
}

TEST_CASE("without per-layer peaks (the serving loop's runs) the runner's figures are the same") {
  AllocationProgram p = forward_program(catalogue_model("Llama-3.1-8B"), prefill(8192));
  RunOptions lean;
  lean.layer_peaks = false;
  for (Bytes total : {kPiB, 512 * MiB}) {  // completed, and an OOM at gate_up
    Gpu full_gpu(total), lean_gpu(total);
    SlotTable full_slots, lean_slots;
    ProgramRun a = run_program(full_gpu.allocator, p, full_slots);
    ProgramRun b = run_program(lean_gpu.allocator, p, lean_slots, lean);
    CHECK(a.layers.size() == 32);
    CHECK(b.layers.empty());
    CHECK(b.completed == a.completed);
    CHECK(b.peak_allocated == a.peak_allocated);
    CHECK(b.peak_reserved == a.peak_reserved);
    CHECK(b.peak_op == a.peak_op);
    CHECK(b.min_device_free == a.min_device_free);
    CHECK(b.min_device_free_op == a.min_device_free_op);
    CHECK(b.reserved_at_min_free == a.reserved_at_min_free);
    CHECK(b.min_free_or_cached == a.min_free_or_cached);
    CHECK(b.allocations == a.allocations);
    CHECK(b.end_allocated == a.end_allocated);
    CHECK(b.oom_op == a.oom_op);
  }
  // The completed run's worked peak (800 MiB at act, above) and the OOM's op.
  Gpu gpu;
  SlotTable slots;
  CHECK(run_program(gpu.allocator, p, slots, lean).peak_allocated == 838'860'800);
  Gpu small(512 * MiB);
  SlotTable small_slots;
  ProgramRun oom = run_program(small.allocator, p, small_slots, lean);
  REQUIRE(oom.oom.has_value());
  CHECK(p.ops[oom.oom_op].tensor == Tensor::gate_up);
}

TEST_CASE("the runner's loop makes no heap allocation once its table and result are sized") {
  ModelConfig ds = catalogue_model("DeepSeek-V3");
  AllocationProgram p = forward_program(ds, prefill(4096));
  Gpu gpu;
  SlotTable slots;
  ProgramRun r;
  run_program(gpu.allocator, p, slots, r);  // sizes the slot table and the result; fills the cache
  const std::size_t before = headroom::test::heap_allocations();
  run_program(gpu.allocator, p, slots, r);
  CHECK(headroom::test::heap_allocations() == before);
  CHECK(r.completed);
  CHECK(r.allocations == program_figures(p).allocations);
}

TEST_CASE("a program run into a CUDA-graph private pool lands there") {
  Gpu gpu;
  SlotTable slots;
  RunOptions graph;
  graph.graph_pool = alloc::PoolId{0, 1};
  ProgramRun r = run_program(gpu.allocator, forward_program(catalogue_model("Llama-3.1-8B"), decode(256)), slots, graph);
  CHECK(r.completed);
  CHECK(r.peak_allocated == 25 * MiB);
  CHECK(gpu.allocator.private_pool_reserved_bytes() == gpu.allocator.reserved_bytes());
  CHECK(gpu.allocator.private_pool_reserved_bytes() == r.peak_reserved);
}

TEST_CASE("an OOM in the forward stops the run, frees its tensors and reports PyTorch's figures") {
  Gpu gpu(512 * MiB);
  SlotTable slots;
  AllocationProgram p = forward_program(catalogue_model("Llama-3.1-8B"), prefill(8192));
  ProgramRun r = run_program(gpu.allocator, p, slots);
  CHECK_FALSE(r.completed);
  REQUIRE(r.oom.has_value());
  CHECK(p.ops[r.oom_op].tensor == Tensor::gate_up);  // 448 MiB next to the residual and hidden states held
  CHECK(r.oom->alloc_size == 448 * MiB);
  CHECK(r.oom->total == 512 * MiB);
  CHECK(gpu.allocator.allocated_bytes() == 0);
  CHECK(r.layers[0].peak_allocated == 8192 * 44 * KiB);  // the attention phase completed
  CHECK(r.layers[1].peak_allocated == 0);  // never reached
}

TEST_CASE("bad shapes and options are input errors naming the field") {
  ModelConfig llama = catalogue_model("Llama-3.1-8B");
  CHECK_THROWS_WITH(forward_program(llama, {0, 1, 0, 1}), "tokens: expected at least 1, got 0");
  CHECK_THROWS_WITH(forward_program(llama, {8, 0, 0, 1}), "seqs: expected at least 1, got 0");
  CHECK_THROWS_WITH(forward_program(llama, {8, 16, 0, 1}), "seqs: 16 sequences need at least as many tokens, got 8 tokens");
  CHECK_THROWS_WITH(forward_program(llama, {8, 4, 5, 1}), "decode_seqs: expected 0 to 4 (the sequences in the step), got 5");
  CHECK_THROWS_WITH(forward_program(llama, {8, 4, 4, 1}),
                    "decode_seqs: all 4 sequences decode one token each, so tokens must be 4, got 8");
  CHECK_THROWS_WITH(forward_program(llama, {8, 1, 0, 3}),
                    "model 'Llama-3.1-8B': total number of attention heads (32) must be divisible by tensor parallel "
                    "size (3)");
  ForwardOptions o;
  o.moe_chunk_tokens = 0;
  CHECK_THROWS_WITH(forward_program(llama, prefill(8), o), "moe_chunk_tokens: expected at least 1, got 0");
  CHECK_THROWS_WITH(sampler_program(llama, 0), "seqs: expected at least 1, got 0");
  CHECK_THROWS_WITH(parse_sampler_kind("topk", "--sampler"), "--sampler: expected one of greedy, native, flashinfer, got 'topk'");
  CHECK(parse_attention_backend("flash_attn", "x") == AttentionBackend::flash_attn);
  CHECK_THROWS_WITH(parse_attention_backend("fa3", "--attention"),
                    "--attention: expected one of flash-attn, flashinfer, got 'fa3'");
  CHECK(parse_decode_out_buffer("per-layer", "x") == DecodeOutBuffer::per_layer);
  CHECK_THROWS_AS(parse_decode_out_buffer("global", "x"), InputError);
}
