#pragma once
// What an engine's start-up leaves behind: whether it started (or the message it failed with,
// a PyTorch OOM included), the KV capacity it decided, where the bytes went, the resolved
// configuration, and the device and caching allocator in the state the serving loop continues
// from.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/allocator/caching_allocator.hpp"
#include "sim/device/device.hpp"
#include "sim/engine/engine_config.hpp"
#include "sim/engine/parallel_ranks.hpp"
#include "sim/model/eager_forward_program.hpp"
#include "sim/model/forward_program.hpp"
#include "sim/model/program_runner.hpp"
#include "sim/model/sampler_program.hpp"

namespace headroom::engine {

// Start-up steps in the order the engines run them (not every engine has every step).
enum class StartupStage {
  memory_check,         // vLLM: free memory at start against the requested share (§1.1)
  load_weights,
  profile_run,          // vLLM: dummy forward + sampler (§1.1)
  kv_cache_sizing,      // the KV capacity arithmetic and its checks
  kv_cache_allocation,
  request_pool,         // SGLang ReqToTokenPool, LightLLM req_to_token_indexs
  rotary_cache,         // LightLLM: _init_custom's cos/sin tables (vLLM and SGLang build theirs in load_weights)
  attention_workspace,
  cuda_graph_capture,
  sampler_warmup,       // vLLM: the post-capture dummy sampler run (§1.1)
  max_len_check,        // LightLLM: _check_max_len_infer (§3)
  canary,               // a policy's canary allocation (sim/policy)
  serving,              // start-up finished
};
std::string_view startup_stage_name(StartupStage stage);  // "load weights", "profile run", ...

// Bytes by what holds them at the end of start-up (allocator block sizes, i.e. rounded).
struct StartupBytes {
  Bytes weights = 0;
  Bytes rotary_cache = 0;      // the rotary-embedding tables (model/rotary_cache.hpp), not weights
  Bytes kv_cache = 0;
  Bytes request_pool = 0;
  Bytes workspaces = 0;        // attention-backend workspaces
  Bytes graph_pool = 0;        // reserved by the CUDA-graph private pool
  Bytes graph_execs = 0;       // the driver's memory for the instantiated graphs (in non_torch)
  Bytes activations_peak = 0;  // most activation bytes allocated at once by a start-up forward
  Bytes non_torch = 0;         // this process's device bytes outside the allocator: context + growth
  Bytes reserved = 0;          // allocator reserved, all pools, at the end
  Bytes device_free = 0;       // cudaMemGetInfo free at the end
  Bytes canary = 0;            // a policy's canary
};

// vLLM's accounting (§1.1) as it measured it.
struct VllmFigures {
  Bytes requested = 0;             // total × gpu_memory_utilization
  Bytes free_at_start = 0;         // cudaMemGetInfo free at the baseline snapshot
  Bytes model_memory_usage = 0;    // torch-allocated growth while loading weights
  Bytes torch_peak_increase = 0;   // profile run: peak allocated − allocated before it
  Bytes non_torch_increase = 0;    // profile run: growth of (device used − torch reserved)
  std::int64_t available_kv = 0;   // requested − non_kv (negative: nothing left)
  Bytes page_size = 0;             // bytes of one block in one layer
  Bytes cudagraph_memory = 0;      // free-memory drop during capture (vLLM's "took X GiB")
  std::int64_t suggested_kv_cache_memory = 0;  // the logged suggestion with its 150 MiB buffer
  double max_concurrency = 0;      // num_blocks / ceil(max_model_len / block_size)
};

// SGLang's profile_max_num_token (§2.2) and request-pool sizing (§2.3).
struct SglangFigures {
  double mem_fraction_static = 0;  // as used, after the aiter ×0.85 (§2.5)
  Bytes total_gpu_memory = 0;      // free before weights
  Bytes available_gpu_memory = 0;  // free after weights
  double rest_memory = 0;          // available − total × (1 − MFS), bytes (may be negative)
  Bytes cell_size = 0;             // KV bytes per token, all layers on this rank
  std::int64_t max_num_reqs = 0;   // ReqToTokenPool rows
  std::int64_t max_running_requests = 0;
  // The SWA KV pool (§2.2; all 0 without one): set_num_tokens_hybrid_swa's split of the profiled
  // tokens (full_tokens is the KV pool's kv_tokens) and the scheduler's sliding_window_size
  // (gpt-oss: sliding_window − 1; Llama 4: attention_chunk_size).
  std::int64_t swa_tokens = 0;
  std::int64_t unsplit_tokens = 0;  // max_total_num_tokens before the split (what --max-total-tokens caps)
  std::int64_t sliding_window = 0;
  int full_layers = 0;
  int swa_layers = 0;
  bool swa_layers_chunked = false;  // Llama 4: chunked local attention layers, the window their chunk
};

// LightLLM's profile (§3) and its max-length check prefill.
struct LightllmFigures {
  Bytes free_after_weights = 0;
  Bytes cell = 0;                  // KV bytes per token, all layers on this rank
  std::int64_t batch_max_tokens = 0;
  std::int64_t max_req_num = 0;    // req_to_token_indexs rows - 1 (running_max_req_size + 8)
  Bytes check_peak = 0;            // activation peak of the check prefill
};

using EngineFigures = std::variant<VllmFigures, SglangFigures, LightllmFigures>;

// The rank simulated and what its communicators hold (parallel_ranks.hpp, §9).
struct ParallelStartup {
  int rank = 0;               // global rank simulated
  std::string why;            // why that rank stands for the deployment
  model::RankPlacement placement;
  CommunicatorMemory communicators;
};

// The simulated GPU after start-up: the serving loop runs its programs through `allocator`
// with `slots` (which holds the engine's persistent buffers, e.g. attention workspaces).
struct ServingMemory {
  std::unique_ptr<device::Device> device;
  std::unique_ptr<alloc::CachingAllocator> allocator;  // destroyed before the device
  std::unique_ptr<model::SlotTable> slots;
  std::vector<alloc::Block*> weights;
  std::vector<alloc::Block*> rotary_cache;  // vLLM/SGLang cos_sin_cache, LightLLM _cos_cached/_sin_cached
  std::vector<alloc::Block*> kv_cache;      // one per layer (vLLM), 2·L or L (SGLang), 1 (LightLLM)
  std::vector<alloc::Block*> request_pool;
  std::vector<alloc::Block*> engine_buffers;   // workspaces no forward program names (MLA prefill, MoE)
  alloc::Block* custom_all_reduce_rank_data = nullptr;  // custom_all_reduce.py rank_data
  std::vector<alloc::Block*> graph_rng_state;  // seed and offset of the first graph, outside the pool
  std::optional<alloc::PoolId> graph_pool;
  alloc::Block* canary = nullptr;           // a policy's canary, held until released on an OOM
  bool cublas_initialised = false;          // the first GEMM created the cuBLAS workspaces
};

struct StartupResult {
  model::Engine engine = model::Engine::vllm;
  bool ok = false;
  StartupStage stage = StartupStage::memory_check;  // where it stopped (serving when ok)
  std::string failure;                 // the engine's message; PyTorch's OOM message for an OOM
  std::optional<alloc::OomInfo> oom;   // when a malloc failed

  std::int64_t kv_tokens = 0;          // token slots in the KV pool (vLLM: blocks × block_size)
  std::int64_t kv_blocks = 0;          // vLLM blocks (block 0 is the null block); pages elsewhere
  int kv_block_tokens = 1;             // vLLM block_size, SGLang page_size, LightLLM 1
  // vLLM's KV cache groups (vllm_kv_cache_groups.hpp): 0 for full attention, else the group's
  // sliding window; kv_blocks is one pool shared by the groups.
  std::vector<std::int64_t> kv_group_windows = {0};
  bool kv_groups_chunked = false;      // the non-zero windows are attention chunks (Llama 4)
  std::int64_t max_running_requests = 0;
  std::vector<int> graph_batch_sizes;  // captured sizes, ascending
  StartupBytes bytes;
  EngineConfig config;                 // as resolved
  std::vector<FilledDefault> filled;   // what resolve() filled
  EngineFigures figures;
  // What the serving forward passes use: attention backend and workspace, sampler path.
  model::ForwardOptions forward;
  model::SamplerOptions sampler;
  ParallelStartup parallel;
  // Set where the engine runs an eager path whose temporaries depend on each sequence's context
  // (SGLang's torch_native attention): serving steps run this program instead (§4d).
  std::optional<model::EagerOptions> eager;
  // The captured decode graphs end with the fp32 logits (SGLang, LightLLM): a replayed step's
  // sampler starts from them (SamplerOptions::logits_from_graph).
  bool graph_computes_logits = false;
  bool kv_sized_by_policy = false;     // a policy's sizer decided kv_tokens, not the engine's arithmetic
  std::vector<std::string> log;        // the engine's start-up log lines, in order
  ServingMemory memory;
};

}  // namespace headroom::engine
