#include "sim/model/sampler_program.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/core/enum_names.hpp"
#include "sim/core/error.hpp"
#include "sim/model/tensor_parallel.hpp"

namespace headroom::model {

namespace {

constexpr std::array<EnumName<SamplerKind>, 3> kSamplerKindNames{{
    {SamplerKind::greedy, "greedy"},
    {SamplerKind::native, "native"},
    {SamplerKind::flashinfer, "flashinfer"},
}};

}  // namespace

std::string_view sampler_kind_name(SamplerKind kind) { return enum_name(kSamplerKindNames, kind); }

SamplerKind parse_sampler_kind(std::string_view text, std::string_view what) {
  return parse_enum(kSamplerKindNames, text, what);
}

namespace {

// lm_head over N rows: [N, V padded] in the model dtype, gathered across TP ranks.
std::uint32_t emit_lm_head(ProgramBuilder& b, const ModelConfig& m, Bytes N, int tp) {
  TensorParallelShard shard = tensor_parallel_shard(m, tp);
  const Bytes rows = static_cast<Bytes>(shard.vocab);  // lm_head rows per rank, padded to 64
  const Bytes e = dtype_bytes(m.dtype);
  if (tp == 1) return b.alloc(Tensor::logits, N * rows * e);
  // LogitsProcessor._gather_logits → GroupCoordinator.all_gather(dim=-1): a [tp·N, V/tp] buffer,
  // then movedim + reshape copies it to [N, V]; the rank's own [N, V/tp] dies with _get_logits.
  std::uint32_t part = b.alloc(Tensor::logits_partial, N * rows * e);
  std::uint32_t gather = b.alloc(Tensor::logits_gather, static_cast<Bytes>(tp) * N * rows * e);
  std::uint32_t logits = b.alloc(Tensor::logits, N * static_cast<Bytes>(tp) * rows * e);
  b.free(gather);
  b.free(part);
  return logits;
}

// cub's temporary storage for a radix sort of key/value pairs without a DoubleBuffer: the alternate
// keys and values, each rounded up to 256 B, and 255 B to align the blob (cub 2.1.0
// cub/device/dispatch/dispatch_radix_sort.cuh DispatchSegmentedRadixSort::InvokePasses,
// cub/util_device.cuh AliasTemporaries). PyTorch asks its allocator for exactly this.
constexpr Bytes cub_sort_pairs_temp_bytes(Bytes elements, Bytes key_bytes, Bytes value_bytes) {
  constexpr Bytes kAlign = 256;
  auto aligned = [](Bytes n) { return (n + kAlign - 1) / kAlign * kAlign; };
  return aligned(elements * key_bytes) + aligned(elements * value_bytes) + (kAlign - 1);
}

// The scratch of PyTorch's CUDA sort of [N, V] fp32 logits with int64 indices along V, after its
// outputs. aten/src/ATen/native/cuda/Sort.h should_use_small_sort: rows of at most 4,096 entries
// sort in place (no scratch). SortStable.cu (pytorch@061531e) do_launch_stable_sort_kernel sorts
// whole rows, at most INT_MAX elements a pass; a pass of 128 rows or more with rows under 1,000,000
// takes segmented_sort_pairs, which allocates reverse_indices (int64, 8 B an element) and then, in
// at::cuda::cub::segmented_sort_pairs (ATen/cuda/cub.cuh CUB_WRAPPER), cub's temporary storage;
// the storage is freed when the cub call returns, reverse_indices when segmented_sort_pairs does,
// before the next pass. Passes of fewer rows take segmented_sort_pairs_by_full_sort (int2 pairs
// and cub::DeviceRadixSort) or, one row, segmented_sort_large_segments: not modelled.
void emit_stable_sort_scratch(ProgramBuilder& b, Bytes N, Bytes V) {
  constexpr Bytes kSmallSortMax = 4096;        // Sort.h should_use_small_sort
  constexpr Bytes kIntMax = 2147483647;        // SortStable.cu numel_or_intmax
  constexpr Bytes kSegmentedRowsMin = 128;     // SortStable.cu: nsegments < 128 → full sort
  constexpr Bytes kLargeSegmentMin = 1000000;  // SortStable.cu: nsort >= 1000000 → one row a call
  if (V <= kSmallSortMax || V >= kLargeSegmentMin) return;
  const Bytes rows_per_pass = kIntMax / V;     // nbatch / nsort
  for (Bytes done = 0; done < N;) {
    const Bytes rows = std::min(N - done, rows_per_pass);
    done += rows;
    if (rows < kSegmentedRowsMin) continue;
    const Bytes elements = rows * V;
    std::uint32_t reverse = b.alloc(Tensor::sort_reverse_indices, elements * 8);
    std::uint32_t cub = b.alloc(Tensor::sort_cub_temp, cub_sort_pairs_temp_bytes(elements, 4, 8));
    b.free(cub);
    b.free(reverse);
  }
}

}  // namespace

void emit_sampler(ProgramBuilder& b, const ModelConfig& m, std::int64_t seqs, int tp, const SamplerOptions& o) {
  if (seqs < 1) throw InputError(fmt::format("seqs: expected at least 1, got {}", seqs));
  tensor_parallel_shard(m, tp);  // throws for a TP that does not fit the model
  const Bytes N = static_cast<Bytes>(seqs);
  const Bytes V = static_cast<Bytes>(m.vocab);          // logical vocabulary: what the sampler sees
  const Bytes NV = N * V;
  b.set_layer(kNoLayer);

  std::uint32_t hidden = kNoSlot;
  std::uint32_t logits = kNoSlot;
  std::uint32_t fp32 = kNoSlot;
  if (!o.logits_from_graph) {
    // gpu_model_runner: sample_hidden_states = hidden_states[logits_indices], one row per sequence.
    hidden = b.alloc(Tensor::sample_hidden, N * static_cast<Bytes>(m.hidden) * dtype_bytes(m.dtype));
    logits = emit_lm_head(b, m, N, tp);
    // Sampler.forward: logits[..., :vocab].to(float32), a contiguous [N, V] copy (vllm#27508's
    // 786 MiB allocation); temperature and logits processors then work in place (§4a).
    fp32 = b.alloc(Tensor::logits_fp32, NV * 4);
  }
  std::uint32_t ids = kNoSlot;
  switch (o.kind) {
    case SamplerKind::greedy:
      ids = b.alloc(Tensor::greedy_ids, N * 8);  // argmax: int64 [N]
      break;
    case SamplerKind::native: {
      // vllm/v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p: logits.sort → fp32 values and
      // int64 indices, then the sort's scratch (vllm#15105's 1.74 GiB); top-k: bool mask; top-p:
      // softmax (cumsum in place) and a bool mask; the masked values are scattered back (a new
      // tensor unless in place). Tiny [N] temporaries (k as int64, the gathered threshold) are
      // left out.
      std::uint32_t sorted = b.alloc(Tensor::sort_values, NV * 4);
      std::uint32_t index = b.alloc(Tensor::sort_indices, NV * 8);
      emit_stable_sort_scratch(b, N, V);
      std::uint32_t k_mask = b.alloc(Tensor::top_k_mask, NV * 1);
      std::uint32_t p_probs = b.alloc(Tensor::top_p_probs, NV * 4);
      std::uint32_t p_mask = b.alloc(Tensor::top_p_mask, NV * 1);
      std::uint32_t masked = o.scatter_in_place ? kNoSlot : b.alloc(Tensor::masked_logits, NV * 4);
      b.free(sorted);
      b.free(index);
      b.free(k_mask);
      b.free(p_probs);
      b.free(p_mask);
      // forward_native: probs = softmax(fp32); random_sample: q = empty_like(probs).exponential_(),
      // probs.div_(q).argmax() → int64 [N].
      std::uint32_t probs = b.alloc(Tensor::probs, NV * 4);
      std::uint32_t noise = b.alloc(Tensor::exponential_noise, NV * 4);
      ids = b.alloc(Tensor::sampled_ids, N * 8);
      b.free(noise);
      b.free(probs);
      b.free(masked);
      break;
    }
    case SamplerKind::flashinfer: {
      // flashinfer/sampling.py top_k_top_p_sampling_from_logits (top_k_first): top_k_mask_logits →
      // a new fp32 [N, V]; torch.softmax → fp32 [N, V]; top_p_sampling_from_probs → int32 [N].
      std::uint32_t masked = b.alloc(Tensor::masked_logits, NV * 4);
      std::uint32_t probs = b.alloc(Tensor::probs, NV * 4);
      ids = b.alloc(Tensor::sampled_ids, N * 4);
      b.free(probs);
      b.free(masked);
      break;
    }
  }
  b.free(ids);
  b.free(fp32);
  b.free(logits);
  b.free(hidden);
}

void emit_graph_logits(ProgramBuilder& b, const ModelConfig& m, std::int64_t seqs, int tp, GraphLogitsOutput output) {
  if (seqs < 1) throw InputError(fmt::format("seqs: expected at least 1, got {}", seqs));
  const Bytes N = static_cast<Bytes>(seqs);
  const Bytes fp32_bytes = N * static_cast<Bytes>(m.vocab) * 4;
  b.set_layer(kNoLayer);
  std::uint32_t logits = emit_lm_head(b, m, N, tp);
  std::uint32_t fp32 = kNoSlot;
  switch (output) {
    case GraphLogitsOutput::engine_buffer: break;  // copy_ into the buffer: no allocation
    case GraphLogitsOutput::dropped: fp32 = b.alloc(Tensor::logits_fp32, fp32_bytes); break;
    case GraphLogitsOutput::kept:
      // One buffer per captured size: the persistent key's owner is the batch size.
      b.alloc_persistent(Tensor::logits_fp32, fp32_bytes, static_cast<std::int32_t>(seqs));
      break;
  }
  b.free(logits);
  b.free(fp32);
}

AllocationProgram sampler_program(const ModelConfig& model, std::int64_t seqs, int tp, const SamplerOptions& options) {
  ProgramBuilder builder(
      fmt::format("sampler {} N={} tp={} {}", model.name, seqs, tp, sampler_kind_name(options.kind)), model.layers);
  emit_sampler(builder, model, seqs, tp, options);
  return builder.finish();
}

}  // namespace headroom::model
