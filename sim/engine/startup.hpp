#pragma once
// Engine start-up through the caching allocator model, as each engine does it today
// (serving-memory-model.md §1.1–1.5 vLLM, §2.1–2.5 SGLang, §3 LightLLM): weights loaded tensor by
// tensor, the KV capacity decided by the engine's own arithmetic, KV and request pools,
// attention workspaces, CUDA graphs captured into a private pool, and the engine's own checks.
// A start-up that runs out of memory or fails a check is a result (ok = false, with the engine's
// or PyTorch's message), not an exception; bad configuration is an InputError.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/engine_config.hpp"
#include "sim/engine/startup_result.hpp"

namespace headroom::engine {

// Resolves `config` (engine_config.hpp) and starts the engine on one rank of `deployment`.
StartupResult start_engine(const Deployment& deployment, const EngineConfig& config);
StartupResult vllm_startup(const Deployment& deployment, VllmConfig config);
StartupResult sglang_startup(const Deployment& deployment, SglangConfig config);
StartupResult lightllm_startup(const Deployment& deployment, LightllmConfig config);

// --- The engines' sizing arithmetic, as pure functions -------------------------------------------

// vLLM §1.2: floor(available_KV / page_size / num_layers); 0 when nothing is available.
std::int64_t vllm_num_blocks(std::int64_t available_kv, Bytes page_size, int layers);
// vLLM max_memory_usage_bytes of one request of `tokens` tokens: ceil(tokens / block) pages per layer.
Bytes vllm_request_kv_bytes(std::int64_t tokens, int block_size, Bytes page_size, int layers);
// vLLM estimate_max_model_len: the longest request whose pages fit `available_kv`.
std::int64_t vllm_estimate_max_model_len(std::int64_t available_kv, int block_size, Bytes page_size, int layers);

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
// LightLLM §3: req_to_token_indexs int32 [max_req_num + 1, max(batch_max_tokens, max_req_total_len + 8)]
// with max_req_num = running_max_req_size + 8.
Bytes lightllm_req_to_token_bytes(std::int64_t running_max_req_size, std::int64_t batch_max_tokens,
                                  std::int64_t max_req_total_len);

// --- Steps the three start-ups share -----------------------------------------------------------

// The device of the deployment (its GPU profile, visible capacity and other processes) and a
// caching allocator with its PYTORCH_CUDA_ALLOC_CONF, nothing allocated yet.
ServingMemory make_serving_memory(const Deployment& deployment);

// Marks `r` failed at `stage` with `message`.
void fail(StartupResult& r, StartupStage stage, std::string message);
// Marks `r` failed at `stage` by a PyTorch OOM; the message is PyTorch's ("HIP" on AMD GPUs).
void fail_oom(StartupResult& r, StartupStage stage, const alloc::OomInfo& oom, const Deployment& deployment);

// Allocates the weight tensors one by one in module order; false (and `r` failed) on OOM.
bool load_weights(StartupResult& r, const Deployment& deployment);

// Allocates one engine-wide buffer the forward programs know as attention_workspace, so that they
// find it held; false (and `r` failed) on OOM.
bool allocate_attention_workspace(StartupResult& r, const Deployment& deployment, Bytes bytes);

// Runs `program` eagerly (default pool); tracks the activation peak; false on OOM (`r` untouched
// apart from the peak, the caller decides the message). `run` receives the measurement.
bool run_eager(StartupResult& r, const model::AllocationProgram& program, model::ProgramRun& run);

// Captures one decode graph per size, largest first, into the shared private pool: an eager
// warm-up in the default pool, two RNG-state tensors outside the pool (caching-allocator spec §4),
// then the forward captured into the pool (r.forward options). False (and `r` failed) on OOM.
bool capture_decode_graphs(StartupResult& r, const Deployment& deployment, const std::vector<int>& sizes);

// The device's free memory after empty_cache, as the engines measure it.
Bytes measured_free(ServingMemory& memory);

// Fills the byte categories that are read off the final state (reserved, free, non-torch, graph pool).
void finish_bytes(StartupResult& r);

}  // namespace headroom::engine
