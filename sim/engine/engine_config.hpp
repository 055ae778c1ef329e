#pragma once
// The start-up knobs of each engine as plain data, under the engines' own names and with their
// own defaults (docs/serving-memory-model.md §1 vLLM, §2 SGLang, §3 LightLLM). Knobs whose default
// depends on the model or the GPU are optional; resolve() fills them from the deployment, checks
// every value, and says what it filled and why. The default rules are exposed as pure functions
// so tests can pin the documented numbers.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/allocator/alloc_config.hpp"
#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/device/gpu_profile.hpp"
#include "sim/model/forward_program.hpp"
#include "sim/model/kv_layout.hpp"
#include "sim/model/model_config.hpp"
#include "sim/model/sampler_program.hpp"

namespace headroom::engine {

// cuBLAS and cuBLASLt workspaces created by the first GEMM, outside PyTorch's allocator: 32 MiB
// each on sm90+ (docs/serving-memory-model.md §5, pytorch#120925), which is vLLM's measured non-torch
// growth of 0.07 GiB (vllm#21489). A scenario parameter: older GPUs and releases use less.
inline constexpr Bytes kDefaultNonTorchGrowth = 64 * MiB;

// One rank of a deployment: the model, the GPU, the tensor-parallel size, and what the GPU holds
// before the engine starts.
struct Deployment {
  model::ModelConfig model;
  device::GpuProfile gpu;
  int tp = 1;
  // Capacity this process sees (cudaDeviceProp::totalGlobalMem; a MIG slice or a different
  // driver). Absent: the profile's capacity.
  std::optional<Bytes> visible;
  Bytes other_processes = 0;  // bytes other processes hold on the GPU during start-up
  Bytes non_torch_growth = kDefaultNonTorchGrowth;
  alloc::AllocatorConfig allocator;  // PYTORCH_CUDA_ALLOC_CONF
  // Debugging (`headroom run --check`): the allocator checks its invariants after every operation,
  // from the first weight tensor on (CachingAllocator::set_check_each_operation). Slow.
  bool check_allocator_each_operation = false;

  Bytes total() const { return visible ? *visible : gpu.capacity_bytes; }
};

// A knob resolve() or start-up rejects. `key` is the knob's name (as in a scenario's `engine`
// mapping), so that the scenario layer can name the file's line; what() is the whole message.
class EngineConfigError : public InputError {
 public:
  EngineConfigError(std::string key, const std::string& message) : InputError(message), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// Throws InputError naming the field: tp below 1 or not fitting the model, a zero capacity.
void validate_deployment(const Deployment& deployment);

// A default resolve() filled in: the knob's engine name, its value, and the rule it came from.
struct FilledDefault {
  std::string field;
  std::string value;
  std::string why;
  bool operator==(const FilledDefault&) const = default;
};

// ---------------------------------------------------------------------------------------------
// vLLM (v1 engine)

enum class UsageContext { api_server, llm_class };  // vllm serve / the LLM class (§1.3)
std::string_view usage_context_name(UsageContext usage);
UsageContext parse_usage_context(std::string_view text, std::string_view what);

// CompilationConfig.cudagraph_mode (§1.5).
enum class CudaGraphMode { none, piecewise, full, full_decode_only, full_and_piecewise };
std::string_view cudagraph_mode_name(CudaGraphMode mode);  // vLLM's spelling: FULL_AND_PIECEWISE, ...
CudaGraphMode parse_cudagraph_mode(std::string_view text, std::string_view what);

// VLLM_ATTENTION_BACKEND values this simulator models.
enum class VllmAttentionBackend { flash_attn, flashinfer, flashmla, cutlass_mla, triton_mla };
std::string_view vllm_attention_backend_name(VllmAttentionBackend backend);  // FLASH_ATTN, ...
VllmAttentionBackend parse_vllm_attention_backend(std::string_view text, std::string_view what);
bool is_mla_backend(VllmAttentionBackend backend);

struct VllmConfig {
  double gpu_memory_utilization = 0.9;               // share of the device total (§1.1)
  std::optional<std::int64_t> max_num_seqs;          // default by device (§1.3)
  std::optional<std::int64_t> max_num_batched_tokens;  // default by device (§1.3)
  std::optional<int> block_size;                     // 16; FlashMLA forces 64, CUTLASS MLA 128 (§1.2)
  std::optional<std::int64_t> max_model_len;         // default: the model's max_position_embeddings
  bool enable_prefix_caching = true;                 // on for generative models (§1.3)
  std::optional<std::vector<int>> cudagraph_capture_sizes;  // default: §1.5's list
  CudaGraphMode cudagraph_mode = CudaGraphMode::full_and_piecewise;
  bool enforce_eager = false;                        // no CUDA graphs
  int num_speculative_tokens = 0;
  model::KvCacheDtype kv_cache_dtype = model::KvCacheDtype::model;  // "auto"
  std::optional<VllmAttentionBackend> attention_backend;  // FLASH_ATTN (MHA/GQA) or FLASHMLA (MLA)
  std::optional<Bytes> kv_cache_memory_bytes;        // --kv-cache-memory: skips the accounting (§1.1)
  std::optional<std::int64_t> num_gpu_blocks_override;  // replaces the computed block count (§1.2)
  model::SamplerKind sampler = model::SamplerKind::native;  // VLLM_USE_FLASHINFER_SAMPLER=1: flashinfer
  UsageContext usage_context = UsageContext::api_server;
  // MLA decode output buffer of FlashInfer-MLA/CUTLASS-MLA (§4c): `transient` (released builds),
  // `per-layer` (the #37442 regression: one zeroed (max_num_seqs, heads, 512) fp32 buffer cached
  // per layer, created lazily in forward_mqa, which profile_run never calls) or `shared`
  // (#37799: one module-level buffer).
  model::DecodeOutBuffer mla_decode_out = model::DecodeOutBuffer::transient;
};

// EngineArgs.get_batch_defaults (§1.3): (max_num_batched_tokens, max_num_seqs).
struct VllmBatchDefaults {
  std::int64_t max_num_batched_tokens = 0;
  std::int64_t max_num_seqs = 0;
  bool operator==(const VllmBatchDefaults&) const = default;
};
// `device_name` is matched for "a100" (any case), as vLLM does with the CUDA device name.
VllmBatchDefaults vllm_batch_defaults(Bytes device_total, std::string_view device_name, UsageContext usage);

// §1.5: [1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16) with
// max = min(max_num_seqs × 2 × (1 + num_speculative_tokens), 512), capped by max_num_batched_tokens.
std::vector<int> vllm_cudagraph_capture_sizes(std::int64_t max_num_seqs, std::int64_t max_num_batched_tokens,
                                              int num_speculative_tokens = 0);

// Block size an MLA backend forces (§1.2), or nullopt when the backend takes any.
std::optional<int> vllm_forced_block_size(VllmAttentionBackend backend);

std::vector<FilledDefault> resolve(VllmConfig& config, const Deployment& deployment);

// ---------------------------------------------------------------------------------------------
// SGLang

enum class SglangAttentionBackend { flashinfer, aiter };
std::string_view sglang_attention_backend_name(SglangAttentionBackend backend);  // "flashinfer", "aiter"
SglangAttentionBackend parse_sglang_attention_backend(std::string_view text, std::string_view what);

struct SglangConfig {
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
};

// §2.1 table: chunked_prefill_size and cuda_graph_max_bs by gpu_mem (MiB) and TP size;
// nullopt gpu_mem is the "unknown" row.
struct SglangGpuDefaults {
  std::int64_t chunked_prefill_size = 0;
  int cuda_graph_max_bs = 0;
  bool operator==(const SglangGpuDefaults&) const = default;
};
SglangGpuDefaults sglang_gpu_defaults(std::optional<double> gpu_mem_mib, int tp);

// §2.1: reserved_MiB = 512 + 1.5 × max(chunked_prefill_size, 2048) + 2 × cuda_graph_max_bs
// + tp × pp / 8 × 1024, at least 10,240 above 60 GiB of GPU memory. Chunked prefill off
// (chunked_prefill_size ≤ 0): max_prefill_tokens takes its place.
double sglang_reserved_memory_mib(double gpu_mem_mib, int tp, std::int64_t chunked_prefill_size,
                                  int cuda_graph_max_bs, int pp = 1, std::int64_t max_prefill_tokens = 16384);

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
std::vector<int> sglang_cuda_graph_batch_sizes(int cuda_graph_max_bs, std::int64_t req_to_token_pool_size);

// Fills the §2.1 defaults; the aiter ×0.85 (§2.5) is applied at start-up, as ModelRunner does,
// so that resolving twice changes nothing.
std::vector<FilledDefault> resolve(SglangConfig& config, const Deployment& deployment);

// ---------------------------------------------------------------------------------------------
// LightLLM

struct LightllmConfig {
  double mem_fraction = 0.9;
  std::optional<std::int64_t> max_total_token_num;  // skips the profile (§3)
  std::optional<std::int64_t> batch_max_tokens;     // default: §3
  std::int64_t running_max_req_size = 1000;
  std::int64_t max_req_total_len = 16384;
  std::int64_t chunked_prefill_size = 4096;
  bool disable_chunked_prefill = false;
  int graph_max_batch_size = 256;
  int graph_split_batch_size = 32;
  int graph_grow_step_size = 16;
  std::optional<std::int64_t> graph_max_len_in_batch;  // default: max_req_total_len
  bool disable_cudagraph = false;
  bool disable_check_max_len_infer = false;  // env DISABLE_CHECK_MAX_LEN_INFER
};

// §3: min(max_req_total_len, 2 × chunked_prefill_size + 256) with chunked prefill, else
// max_req_total_len.
std::int64_t lightllm_default_batch_max_tokens(std::int64_t max_req_total_len, std::int64_t chunked_prefill_size,
                                               bool chunked_prefill);

// §3, lightllm/common/basemodel/cuda_graph.py: 1 .. split, then split + grow, split + 2·grow, ...
// below the maximum, then the maximum itself.
std::vector<int> lightllm_graph_batch_sizes(int graph_max_batch_size, int graph_split_batch_size,
                                            int graph_grow_step_size);

std::vector<FilledDefault> resolve(LightllmConfig& config, const Deployment& deployment);

// ---------------------------------------------------------------------------------------------

using EngineConfig = std::variant<VllmConfig, SglangConfig, LightllmConfig>;
model::Engine engine_of(const EngineConfig& config);

}  // namespace headroom::engine
