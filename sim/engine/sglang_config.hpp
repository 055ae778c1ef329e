#pragma once
// SGLang start-up knobs under its own names and defaults (docs/serving-memory-model.md §2).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/deployment.hpp"
#include "sim/engine/sglang_versions.hpp"
#include "sim/model/forward_program.hpp"
#include "sim/model/kv_layout.hpp"
#include "sim/model/sampler_program.hpp"

namespace headroom::engine {

// torch_native: SDPA per request over gathered K/V, an eager activation program (§4d). fa3:
// FlashAttentionBackend (sgl_kernel's FA3), gpt-oss's default on Hopper (§2.2).
enum class SglangAttentionBackend { flashinfer, aiter, torch_native, fa3 };
std::string_view sglang_attention_backend_name(SglangAttentionBackend backend);  // "flashinfer", "aiter", "torch_native", "fa3"
SglangAttentionBackend parse_sglang_attention_backend(std::string_view text, std::string_view what);

struct SglangConfig {
  SglangVersion version = SglangVersion::current;     // the release line (sglang_versions.hpp, §2.6)
  std::optional<double> mem_fraction_static;          // default: §2.1 heuristic
  std::optional<std::int64_t> chunked_prefill_size;   // default: §2.1 table; -1 turns chunking off
  std::int64_t max_prefill_tokens = 16384;            // §2.3
  std::optional<std::int64_t> max_running_requests;   // sizes the request pool when given (§2.3)
  std::optional<std::int64_t> max_total_tokens;       // can only lower the profiled pool (§2.2)
  std::optional<int> cuda_graph_max_bs;               // default: §2.1 table
  std::optional<std::vector<int>> cuda_graph_bs;      // default: §2.3 list up to cuda_graph_max_bs
  bool disable_cuda_graph = false;
  std::optional<std::int64_t> context_length;         // default: the model's max_position_embeddings
  std::optional<SglangAttentionBackend> attention_backend;  // flashinfer on NVIDIA, aiter on AMD
  int page_size = 1;
  double schedule_conservativeness = 1.0;             // new_token_ratio = min(0.7 × this, 1) (§2.4)
  model::KvCacheDtype kv_cache_dtype = model::KvCacheDtype::model;  // "auto"
  // What get_device_memory_capacity() reports (nvidia-smi memory.total, MiB): the `gpu_mem` of
  // the §2.1 heuristic. nvidia-smi reads 81,559 MiB on an H100-80G where totalGlobalMem is
  // 81,090 MiB. Absent: the device total in MiB.
  std::optional<double> gpu_memory_capacity_mib;
  model::SamplerKind sampling_backend = model::SamplerKind::flashinfer;  // --sampling-backend
  // SGLang's SWA KV pool (§2.2): SWA-pool tokens per full-pool token, and the flag that turns
  // the split off (one MHA pool over every layer).
  double swa_full_tokens_ratio = 0.8;
  bool disable_hybrid_swa_memory = false;
  bool disable_radix_cache = false;  // ChunkCache instead of the radix prefix cache
};

// model_config.py is_hybrid_swa_model: the architectures SGLang gives a pool of their own for the
// windowed layers (modelled here: gpt-oss, and Llama 4 with its chunked layers), unless --disable-hybrid-swa-memory (§2.2).
bool sglang_hybrid_swa_model(const model::ModelConfig& model);
bool sglang_hybrid_swa(const model::ModelConfig& model, const SglangConfig& config);

// model_runner set_num_tokens_hybrid_swa (§2.2): the profiled tokens × all layers shared so that
// swa = int(full × ratio): full = int(tokens × layers / (ratio × swa_layers + full_layers)), both
// rounded down to the page.
struct SglangSwaTokens {
  std::int64_t full = 0;
  std::int64_t swa = 0;
  bool operator==(const SglangSwaTokens&) const = default;
};
SglangSwaTokens sglang_hybrid_swa_tokens(std::int64_t max_total_num_tokens, int full_layers, int swa_layers,
                                         double swa_full_tokens_ratio, int page_size);

// FlashAttentionBackend.init_cuda_graph_state (§2.5): the decode metadata made before the graphs
// are captured, one tensor each, for graphs up to max_bs requests: cache_seqlens int32 [max_bs],
// cu_seqlens_q and cu_seqlens_k int32 [max_bs + 1], page_table int32 [max_bs, pages],
// strided_indices int64 [pages] with pages = ceil(context_len / page_size), and with the SWA pool
// a swa_page_table like page_table; with an attention_chunk (Llama 4; 0: none) the local-attention
// metadata over V = max_bs × ceil(context_len / chunk) virtual batches: local_query_start_loc int32
// [V + 1], local_seqused_k int32 [V], local_block_table int32 [V, ceil(chunk / page_size)].
// Without speculative decoding or an encoder.
std::vector<Bytes> sglang_fa3_graph_buffers(int max_bs, std::int64_t context_len, int page_size, bool swa_pool,
                                            std::int64_t attention_chunk = 0);

// §2.1 table: chunked_prefill_size and cuda_graph_max_bs by gpu_mem (MiB) and TP size;
// nullopt gpu_mem is the "unknown" row.
struct SglangGpuDefaults {
  std::int64_t chunked_prefill_size = 0;
  int cuda_graph_max_bs = 0;
  bool operator==(const SglangGpuDefaults&) const = default;
};
// 0.4 (§2.6): 2048 / 8192 and 8 (tp < 4) or 80 / 160 around 25,000 MiB.
SglangGpuDefaults sglang_gpu_defaults(std::optional<double> gpu_mem_mib, int tp,
                                      SglangMemoryDefaultsRule rule = SglangMemoryDefaultsRule::reserved_memory);

// 0.4's mem_fraction_static by tp (§2.6): ≥ 16 → 0.79, ≥ 8 → 0.81, ≥ 4 → 0.85, ≥ 2 → 0.87, else 0.88.
double sglang_0_4_mem_fraction_static(int tp);

// §2.1: reserved_MiB = 512 + 1.5 × max(chunked_prefill_size, 2048) + 2 × cuda_graph_max_bs
// + tp × pp / 8 × 1024, with DP attention + 3 × cuda_graph_max_bs × dp (+ 1.5 × that × dp above 300),
// at least 10,240 above 60 GiB of GPU memory. Chunked prefill off (chunked_prefill_size ≤ 0):
// max_prefill_tokens takes its place. `dp_attention_dp`: dp under --enable-dp-attention, else 0.
double sglang_reserved_memory_mib(double gpu_mem_mib, int tp, std::int64_t chunked_prefill_size,
                                  int cuda_graph_max_bs, int pp = 1, std::int64_t max_prefill_tokens = 16384,
                                  int dp_attention_dp = 0);

// §2.1: MFS = round((gpu_mem − reserved) / gpu_mem, 3); 0.88 when the GPU memory is unknown.
// chunked_prefill_size and cuda_graph_max_bs default to the §2.1 table for this GPU.
double sglang_default_mem_fraction_static(std::optional<double> gpu_mem_mib, int tp,
                                          std::optional<std::int64_t> chunked_prefill_size = std::nullopt,
                                          std::optional<int> cuda_graph_max_bs = std::nullopt);

// §2.5: aiter with a context above 8192 multiplies the fraction by 0.85, a given one included.
double sglang_aiter_mem_fraction_static(double mem_fraction_static, SglangAttentionBackend backend,
                                        std::int64_t context_length);

// §2.3: [1, 2, 4, 8, 12] + range(16, 257, 8) + range(272, 512, 16) + range(512, max + 1, 32), up to
// cuda_graph_max_bs and the request pool's size (cuda_graph_runner get_batch_sizes_to_capture,
// which adds pool size − 1 and pool size when the list reaches beyond the pool).
// 0.4 (§2.6): [1, 2, 4, 8] + range(16, 161, 8), + range(160, 257, 8) above 81,920 MiB with dp 1, the
// pool's size − 1 and size when the list reaches beyond it; then at most the pool's size and
// cuda_graph_max_bs.
std::vector<int> sglang_cuda_graph_batch_sizes(int cuda_graph_max_bs, std::int64_t req_to_token_pool_size,
                                               SglangGraphSizesRule rule = SglangGraphSizesRule::current_list,
                                               std::optional<double> gpu_mem_mib = std::nullopt, int dp = 1);

// Fills the §2.1 defaults; the aiter ×0.85 (§2.5) is applied at start-up, as ModelRunner does,
// so that resolving twice changes nothing.
std::vector<FilledDefault> resolve(SglangConfig& config, const Deployment& deployment);

}  // namespace headroom::engine
