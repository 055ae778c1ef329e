#pragma once
// Engine start-up through the caching allocator model, as each engine does it today
// (docs/serving-memory-model.md §1.1–1.5 vLLM, §2.1–2.5 SGLang, §3 LightLLM): weights loaded tensor by
// tensor, the KV capacity decided by the engine's own arithmetic, KV and request pools,
// attention workspaces, CUDA graphs captured into a private pool, and the engine's own checks.
// A start-up that runs out of memory or fails a check is a result (ok = false, with the engine's
// or PyTorch's message), not an exception; bad configuration is an InputError.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "sim/engine/engine_config.hpp"
#include "sim/engine/startup_result.hpp"
#include "sim/model/rotary_cache.hpp"

namespace headroom::engine {

// A workspace that grows with a request pool whose size is a clamp of the KV capacity: SGLang's
// aiter backend, max_bs = clamp(int(tokens / context × 512), 2048, 4096) requests (§2.3, §2.5).
struct ClampedWorkspace {
  Bytes per_request = 0;
  std::int64_t context_len = 0;
  std::int64_t min_requests = 2048;
  std::int64_t max_requests = 4096;
  std::int64_t requests(std::int64_t kv_tokens) const;
  Bytes bytes(std::int64_t kv_tokens) const { return static_cast<Bytes>(requests(kv_tokens)) * per_request; }
};

// What an engine knows when it sizes its KV cache, handed to a start-up policy (sim/policy) that
// decides the capacity instead of the engine's own arithmetic. Weights are loaded; the forward
// and sampler options the engine serves with are set in `startup`.
struct KvSizingInputs {
  KvSizingInputs(const Deployment& d, StartupResult& r) : deployment(d), startup(r) {}
  const Deployment& deployment;
  StartupResult& startup;
  Bytes free_before_weights = 0;   // cudaMemGetInfo free before the weights (after empty_cache)
  Bytes free_after_weights = 0;
  Bytes non_torch_at_start = 0;    // device used − torch reserved before the weights (context, others)
  // The capacity the engine's own arithmetic gives (SGLang, LightLLM); absent for vLLM, whose
  // arithmetic needs the profile run the sizer replaces (policy/kv_budget.hpp measure_profiled).
  std::optional<std::int64_t> engine_tokens;
  Bytes kv_bytes_per_token = 0;    // all layers on this rank, in the engine's pool layout
  int kv_block_tokens = 1;         // capacities are whole blocks (vLLM block_size, SGLang page_size)
  std::int64_t prefill_tokens = 0; // the largest prefill one step runs (vLLM max_num_batched_tokens,
                                   // SGLang chunked_prefill_size, LightLLM batch_max_tokens)
  std::int64_t batch_seqs = 0;     // the most sequences one step samples (bounded by prefill_tokens)
  int max_graph_batch = 0;         // the largest decode graph the engine captures (0: none)
  std::vector<int> graph_sizes;    // every graph the engine will capture, a size per capture
  // The attention workspace the engine allocates after the KV cache, as a function of the KV
  // capacity (SGLang aiter sizes it by the request pool, itself a clamp of the capacity, §2.5).
  std::function<Bytes(std::int64_t kv_tokens)> workspace_bytes;
  std::optional<ClampedWorkspace> clamped_workspace;  // when workspace_bytes is that clamp
  // Whole blocks of `tokens`, rounded down.
  std::int64_t whole_blocks(std::int64_t tokens) const { return tokens / kv_block_tokens * kv_block_tokens; }
  // Tokens of `kv_bytes` in whole blocks; 0 when the budget is not positive.
  std::int64_t tokens_in(std::int64_t kv_bytes) const {
    if (kv_bytes <= 0 || kv_bytes_per_token == 0) return 0;
    return whole_blocks(static_cast<std::int64_t>(static_cast<Bytes>(kv_bytes) / kv_bytes_per_token));
  }
};

// A policy's decision: the KV capacity in tokens, or why it cannot give one (start-up fails at
// KV sizing with that message).
using KvSizing = std::variant<std::int64_t, std::string>;
using KvSizer = std::function<KvSizing(KvSizingInputs&)>;

// What a start-up policy changes in the engine's start-up; default-constructed: the engine as it
// is today.
struct StartupDirectives {
  KvSizer kv_sizer;                 // empty: the engine's own KV arithmetic
  Bytes canary = 0;                 // held after start-up (LightLLM PR #1273's 256 MiB)
  bool cap_workspace_by_kv = false; // SGLang aiter partitions by min(context, KV capacity) (#20888)
  // A measurement instance (auto_profile's probe): the engine's one-request capacity checks
  // (vLLM max_model_len, LightLLM _check_mem_size) do not apply to its small KV cache.
  bool skip_capacity_checks = false;
};

// Resolves `config` (engine_config.hpp) and starts the engine on one rank of `deployment`.
StartupResult start_engine(const Deployment& deployment, const EngineConfig& config,
                           const StartupDirectives& directives = {});
StartupResult vllm_startup(const Deployment& deployment, VllmConfig config, const StartupDirectives& directives = {});
StartupResult sglang_startup(const Deployment& deployment, SglangConfig config,
                             const StartupDirectives& directives = {});
StartupResult lightllm_startup(const Deployment& deployment, LightllmConfig config,
                               const StartupDirectives& directives = {});

// --- The engines' sizing arithmetic, as pure functions -------------------------------------------

// vLLM §1.2: floor(available_KV / page_size / num_layers); 0 when nothing is available.
std::int64_t vllm_num_blocks(std::int64_t available_kv, Bytes page_size, int layers);
// vLLM max_memory_usage_bytes of one request of `tokens` tokens: ceil(tokens / block) pages per layer.
Bytes vllm_request_kv_bytes(std::int64_t tokens, int block_size, Bytes page_size, int layers);
// vLLM estimate_max_model_len: the longest request whose pages fit `available_kv`.
std::int64_t vllm_estimate_max_model_len(std::int64_t available_kv, int block_size, Bytes page_size, int layers);

// vLLM MLA's chunked-prefill workspace, [size, kv_lora_rank + qk_rope_head_dim] in the model's
// dtype with size = max(min(max(8 × max_model_len, 4 × max_num_seqs × block), 64 Ki), max_num_seqs
// × block) (§1.6); 0 for a model without MLA.
Bytes vllm_mla_chunked_prefill_workspace_bytes(const model::ModelConfig& model, std::int64_t max_model_len,
                                               std::int64_t max_num_seqs, int block_size);

// vLLM's ROCM_AITER_MLA decode buffers under full CUDA graphs (§1.6), in allocation order.
std::vector<Bytes> vllm_aiter_mla_buffers(std::int64_t max_num_seqs, std::int64_t max_model_len);

// SGLang §2.2: floor((available − total × (1 − MFS)) / cell_size), rounded down to page_size;
// zero or negative when nothing is left (the caller fails with SGLang's message).
std::int64_t sglang_profile_max_num_token(Bytes total_gpu_memory, Bytes available_gpu_memory,
                                          double mem_fraction_static, Bytes cell_size, int page_size = 1);
// SGLang §2.3: clamp(int(max_total_num_tokens / context_len × 512), 2048, 4096).
std::int64_t sglang_max_num_reqs(std::int64_t max_total_num_tokens, std::int64_t context_len);
// SGLang §2.3: ReqToTokenPool int32 [max_num_reqs, context_len + 4].
Bytes sglang_req_to_token_pool_bytes(std::int64_t max_num_reqs, std::int64_t context_len);
// SGLang §2.3: min(max_total_num_tokens // 2 or the user's value, the request pool's size).
std::int64_t sglang_max_running_requests(std::int64_t max_total_num_tokens, std::int64_t max_num_reqs,
                                         std::optional<std::int64_t> user_value);
// SGLang §2.5 AiterAttnBackend: max_bs × Hq × ceil(context_len / 256) × (4·D + 8) bytes.
Bytes aiter_workspace_bytes(std::int64_t max_bs, int q_heads, int head_dim, std::int64_t context_len);

// LightLLM §3: floor((free_after_weights − total × (1 − mem_fraction)) / cell); may be ≤ 0.
std::int64_t lightllm_kv_tokens(Bytes free_after_weights, Bytes device_total, double mem_fraction, Bytes cell);

// LightLLM's _init_custom rotary tables (lightllm/models/*/model.py): _cos_cached and _sin_cached,
// each [rows, rotary_dim / 2] in the model dtype (yarn: rotary_dim wide), the rows by its version's
// rule for the model's family and rope_scaling; `max_seq_length` is max_req_total_len + 8
// (router/manager.py). Throws EngineConfigError for a rope_scaling LightLLM refuses.
std::vector<model::RotaryTable> lightllm_rotary_tables(const model::ModelConfig& model, LightllmVersion version,
                                                       std::int64_t max_seq_length);
// LightLLM §3: req_to_token_indexs int32 [max_req_num + 1, max(batch_max_tokens, max_req_total_len + 8)]
// with max_req_num = running_max_req_size + 8.
Bytes lightllm_req_to_token_bytes(std::int64_t running_max_req_size, std::int64_t batch_max_tokens,
                                  std::int64_t max_req_total_len);

// --- Steps the three start-ups share -----------------------------------------------------------

// The device of the deployment (its GPU profile, visible capacity and other processes) and a
// caching allocator with its PYTORCH_CUDA_ALLOC_CONF, nothing allocated yet.
ServingMemory make_serving_memory(const Deployment& deployment);

// The distributed set-up every engine runs before it measures free memory (vLLM init_device
// init_worker_distributed_environment, SGLang init_torch_distributed, LightLLM init_distributed_env):
// the communicators' NCCL buffers and custom all-reduce IPC buffers join the memory outside
// PyTorch, its rank_data goes through the caching allocator, and the forward programs get the
// simulated rank's placement. false (and `r` failed) on OOM.
bool init_distributed(StartupResult& r, const Deployment& deployment);

// Validates the deployment's parallel sizes against the engine's rules (EngineConfigError naming
// `parallel.<field>`) and picks the rank to simulate (parallel_ranks.hpp most_loaded_rank).
void place_rank(Deployment& deployment, const EngineConfig& config);

// Marks `r` failed at `stage` with `message`.
void fail(StartupResult& r, StartupStage stage, std::string message);
// Marks `r` failed at `stage` by a PyTorch OOM; the message is PyTorch's ("HIP" on AMD GPUs).
void fail_oom(StartupResult& r, StartupStage stage, const alloc::OomInfo& oom, const Deployment& deployment);

// Allocates the weight tensors one by one in module order, and, given the engine's rotary rules
// (vLLM, SGLang), its rotary-embedding tables where its layers build them
// (model/rotary_cache.hpp); false (and `r` failed) on OOM.
bool load_weights(StartupResult& r, const Deployment& deployment, std::optional<model::RotaryRules> rotary);

// Allocates rotary-embedding tables outside the weights (LightLLM's _init_custom) at `stage`;
// false (and `r` failed) on OOM.
bool allocate_rotary_tables(StartupResult& r, const Deployment& deployment, const std::vector<model::RotaryTable>& tables,
                            StartupStage stage);

// Allocates the KV cache as `tensors` tensors of `bytes_each` (vLLM one per layer, SGLang K and V per
// layer, LightLLM one); false (and `r` failed) on OOM. Zero bytes allocate nothing.
bool allocate_kv_cache(StartupResult& r, const Deployment& deployment, int tensors, Bytes bytes_each);

// Allocates the request-to-token table (SGLang ReqToTokenPool, LightLLM req_to_token_indexs);
// false (and `r` failed) on OOM.
bool allocate_request_pool(StartupResult& r, const Deployment& deployment, Bytes bytes);

// Allocates one engine-wide buffer the forward programs know as attention_workspace, so that they
// find it held; false (and `r` failed) on OOM.
bool allocate_attention_workspace(StartupResult& r, const Deployment& deployment, Bytes bytes);
// Allocates one persistent engine buffer that no forward program names (held for the server's
// life, counted in bytes.workspaces); false (and `r` failed at `stage`) on OOM.
bool allocate_engine_buffer(StartupResult& r, const Deployment& deployment, Bytes bytes, StartupStage stage);

// Runs `program` eagerly (default pool); tracks the activation peak; false on OOM (`r` untouched
// apart from the peak, the caller decides the message). `run` receives the measurement.
bool run_eager(StartupResult& r, const model::AllocationProgram& program, model::ProgramRun& run);

// What one engine's decode graph computes beyond the plain decode forward (§1.5).
struct DecodeGraph {
  model::ForwardOptions forward;  // the captured forward's options (vLLM FULL graphs: FA3's splits)
  // The logits processor runs inside the graph (SGLang, LightLLM) and where its fp32 logits go;
  // nullopt: the graph ends at the hidden states, which the engine drops (vLLM: weak_ref_tensors).
  std::optional<model::GraphLogitsOutput> logits;
};

// Captures one decode graph per size, largest first, into the shared private pool
// (graph_capture.hpp): an eager warm-up in the default pool, the generator's two RNG-state tensors
// outside the pool at the process's first capture, then `graph` captured into the pool. False
// (and `r` failed) on OOM.
bool capture_decode_graphs(StartupResult& r, const Deployment& deployment, const std::vector<int>& sizes,
                           const DecodeGraph& graph);

// A profile forward as vLLM's profile_run does it (§1.1): empty_cache, reset the peaks, one
// eager step of `tokens` tokens over `seqs` sequences plus the sampler, then empty_cache again.
struct ProfileMeasurement {
  bool ok = false;
  Bytes peak_allocated_increase = 0;  // torch_peak_increase
  Bytes peak_reserved_increase = 0;   // reserved grows by this much at the peak
  Bytes fragmentation = 0;            // peak reserved − peak allocated during the run
  std::optional<alloc::OomInfo> oom;
  std::string oom_tensor;
};
ProfileMeasurement profile_forward(StartupResult& r, const Deployment& deployment, std::int64_t tokens,
                                   std::int64_t seqs);

// The sampler of a step that replays a captured graph: from the graph's logits where it made them.
model::SamplerOptions graph_sampler(const StartupResult& r);

// The stress LightLLM PR #1273 validates with: one prefill of `prefill_tokens` tokens (a single
// request, greedy sampling) and one decode step of `decode_seqs` sequences (a graph replay when
// the engine captured that size: then only the sampler allocates). Caches are left as they are.
struct StressMeasurement {
  bool ok = false;
  Bytes peak_reserved = 0;   // max_memory_reserved since start-up began
  std::optional<alloc::OomInfo> oom;
  std::string oom_tensor;    // "prefill: gate_up (layer 3)"
};
StressMeasurement stress(StartupResult& r, const Deployment& deployment, std::int64_t prefill_tokens,
                         std::int64_t decode_seqs);

// vLLM PR #30515's CUDA-graph memory estimate: capture the two largest sizes into a scratch pool,
// measure the pool's growth for each, extrapolate first + second × (n − 1), release the pool.
// Graphs share one pool, so this over-estimates (§1.5, #45178). nullopt on OOM.
std::optional<Bytes> estimate_cudagraph_memory(StartupResult& r, const Deployment& deployment,
                                               const std::vector<int>& sizes);

// Asks the policy's sizer, if any, for the capacity; nullopt and `r` failed when it refused.
// Without a sizer returns `engine_tokens`.
std::optional<std::int64_t> decide_kv_tokens(const StartupDirectives& directives, KvSizingInputs& inputs,
                                             std::int64_t engine_tokens);

// Allocates the policy's canary last, after the engine's own checks; false (and `r` failed) on OOM.
bool allocate_canary(StartupResult& r, const Deployment& deployment, Bytes bytes);

// The first GEMM creates the cuBLAS/cuBLASLt workspaces outside the allocator (§5): the context
// grows by the deployment's non_torch_growth, once.
void initialise_cublas(ServingMemory& memory, const Deployment& deployment);

// The device's free memory after empty_cache, as the engines measure it.
Bytes measured_free(ServingMemory& memory);

// Fills the byte categories that are read off the final state (reserved, free, non-torch, graph pool).
void finish_bytes(StartupResult& r);

}  // namespace headroom::engine
