#include "sim/engine/engine_config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/core/error.hpp"
#include "sim/engine/engine_limits.hpp"
#include "sim/engine/engine_registry.hpp"
#include "sim/model/tensor_parallel.hpp"

namespace headroom::engine {

namespace {

std::string lower(std::string_view text) {
  std::string s(text);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void require_at_least(std::string_view engine, std::string_view field, std::int64_t value, std::int64_t least) {
  if (value < least)
    throw EngineConfigError(std::string(field), fmt::format("{} {}: expected at least {}, got {}", engine, field, least, value));
}

// The limits of engine_limits.hpp (docs/limits.md).
void require_at_most(std::string_view engine, std::string_view field, std::int64_t value, std::int64_t most) {
  if (value > most)
    throw EngineConfigError(std::string(field), fmt::format("{} {}: {} is above the limit of {} (docs/limits.md)", engine,
                                                            field, value, most));
}

void require_range(std::string_view engine, std::string_view field, std::int64_t value, std::int64_t least,
                   std::int64_t most) {
  require_at_least(engine, field, value, least);
  require_at_most(engine, field, value, most);
}

// The KV layout the engine would use: an InputError for a dtype the model cannot use names the knob.
model::KvLayout checked_kv_layout(const Deployment& d, model::Engine engine, model::KvCacheDtype dtype, int tp) {
  try {
    return model::kv_layout(d.model, engine_traits(engine).kv_pool, dtype, tp);
  } catch (const EngineConfigError&) {
    throw;
  } catch (const InputError& e) {
    throw EngineConfigError("kv_cache_dtype", e.what());
  }
}

void require_fraction(std::string_view engine, std::string_view field, double value) {
  if (!(value > 0.0 && value <= 1.0))
    throw EngineConfigError(std::string(field), fmt::format("{} {}: expected a value in (0, 1], got {}", engine, field, value));
}

void require_sizes(std::string_view engine, std::string_view field, const std::vector<int>& sizes) {
  if (sizes.empty())
    throw EngineConfigError(std::string(field), fmt::format("{} {}: expected at least one batch size", engine, field));
  for (int s : sizes)
    if (s < 1)
      throw EngineConfigError(std::string(field),
                              fmt::format("{} {}: expected batch sizes of at least 1, got {}", engine, field, s));
}

// Sorted ascending without repeats, as the engines keep their capture lists.
std::vector<int> sorted_unique(std::vector<int> sizes) {
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

std::string list(const std::vector<int>& sizes) {
  if (sizes.size() <= 8) return fmt::format("[{}]", fmt::join(sizes, ", "));
  return fmt::format("[{}, {}, {}, ..., {}] ({} sizes)", sizes[0], sizes[1], sizes[2], sizes.back(), sizes.size());
}

}  // namespace

void validate_deployment(const Deployment& d) {
  if (d.tp < 1) throw InputError(fmt::format("deployment tp: expected at least 1, got {}", d.tp));
  model::tensor_parallel_shard(d.model, d.tp);  // throws InputError when the TP size does not fit
  if (d.total() == 0) throw InputError("deployment visible: expected a capacity above 0 bytes");
}

// ---------------------------------------------------------------------------------------------
// vLLM

std::string_view usage_context_name(UsageContext usage) {
  return usage == UsageContext::api_server ? "api_server" : "llm_class";
}

UsageContext parse_usage_context(std::string_view text, std::string_view what) {
  if (text == "api_server" || text == "api-server") return UsageContext::api_server;
  if (text == "llm_class" || text == "llm-class") return UsageContext::llm_class;
  throw InputError(fmt::format("{}: expected one of api_server, llm_class, got '{}'", what, text));
}

std::string_view cudagraph_mode_name(CudaGraphMode mode) {
  switch (mode) {
    case CudaGraphMode::none: return "NONE";
    case CudaGraphMode::piecewise: return "PIECEWISE";
    case CudaGraphMode::full: return "FULL";
    case CudaGraphMode::full_decode_only: return "FULL_DECODE_ONLY";
    case CudaGraphMode::full_and_piecewise: return "FULL_AND_PIECEWISE";
  }
  return "?";
}

CudaGraphMode parse_cudagraph_mode(std::string_view text, std::string_view what) {
  for (CudaGraphMode m : {CudaGraphMode::none, CudaGraphMode::piecewise, CudaGraphMode::full,
                          CudaGraphMode::full_decode_only, CudaGraphMode::full_and_piecewise})
    if (text == cudagraph_mode_name(m) || lower(text) == lower(cudagraph_mode_name(m))) return m;
  throw InputError(fmt::format(
      "{}: expected one of NONE, PIECEWISE, FULL, FULL_DECODE_ONLY, FULL_AND_PIECEWISE, got '{}'", what, text));
}

std::string_view vllm_attention_backend_name(VllmAttentionBackend backend) {
  switch (backend) {
    case VllmAttentionBackend::flash_attn: return "FLASH_ATTN";
    case VllmAttentionBackend::flashinfer: return "FLASHINFER";
    case VllmAttentionBackend::flashmla: return "FLASHMLA";
    case VllmAttentionBackend::cutlass_mla: return "CUTLASS_MLA";
    case VllmAttentionBackend::triton_mla: return "TRITON_MLA";
  }
  return "?";
}

VllmAttentionBackend parse_vllm_attention_backend(std::string_view text, std::string_view what) {
  for (VllmAttentionBackend b : {VllmAttentionBackend::flash_attn, VllmAttentionBackend::flashinfer,
                                 VllmAttentionBackend::flashmla, VllmAttentionBackend::cutlass_mla,
                                 VllmAttentionBackend::triton_mla})
    if (lower(text) == lower(vllm_attention_backend_name(b))) return b;
  throw InputError(fmt::format(
      "{}: expected one of FLASH_ATTN, FLASHINFER, FLASHMLA, CUTLASS_MLA, TRITON_MLA, got '{}'", what, text));
}

bool is_mla_backend(VllmAttentionBackend backend) {
  return backend == VllmAttentionBackend::flashmla || backend == VllmAttentionBackend::cutlass_mla ||
         backend == VllmAttentionBackend::triton_mla;
}

VllmBatchDefaults vllm_batch_defaults(Bytes device_total, std::string_view device_name, UsageContext usage) {
  // vllm/engine/arg_utils.py get_batch_defaults: device_memory >= 70 GiB and "a100" not in the
  // device name (§1.3).
  bool large = device_total >= 70 * GiB && lower(device_name).find("a100") == std::string::npos;
  if (usage == UsageContext::llm_class) return large ? VllmBatchDefaults{16384, 1024} : VllmBatchDefaults{8192, 256};
  return large ? VllmBatchDefaults{8192, 1024} : VllmBatchDefaults{2048, 256};
}

std::vector<int> vllm_cudagraph_capture_sizes(std::int64_t max_num_seqs, std::int64_t max_num_batched_tokens,
                                              int num_speculative_tokens) {
  // vllm/config/vllm.py (§1.5): the largest size is min(max_num_seqs × 2 × (1 + spec), 512),
  // capped by max_num_batched_tokens.
  std::int64_t largest = std::min<std::int64_t>(max_num_seqs * 2 * (1 + num_speculative_tokens), 512);
  largest = std::min(largest, max_num_batched_tokens);
  std::vector<int> sizes;
  for (int s : {1, 2, 4})
    if (s <= largest) sizes.push_back(s);
  for (int s = 8; s < 256 && s <= largest; s += 8) sizes.push_back(s);
  for (int s = 256; s <= largest; s += 16) sizes.push_back(s);
  return sizes;
}

std::optional<int> vllm_forced_block_size(VllmAttentionBackend backend) {
  // §1.2: FlashMLA pages of 64 tokens, CUTLASS MLA of 128.
  if (backend == VllmAttentionBackend::flashmla) return 64;
  if (backend == VllmAttentionBackend::cutlass_mla) return 128;
  return std::nullopt;
}

std::vector<FilledDefault> resolve(VllmConfig& c, const Deployment& d) {
  validate_deployment(d);
  std::vector<FilledDefault> filled;
  require_fraction("vllm", "gpu_memory_utilization", c.gpu_memory_utilization);

  if (!c.attention_backend) {
    c.attention_backend = d.model.is_mla() ? VllmAttentionBackend::flashmla : VllmAttentionBackend::flash_attn;
    filled.push_back({"attention_backend", std::string(vllm_attention_backend_name(*c.attention_backend)),
                      d.model.is_mla() ? "vLLM's MLA backend on Hopper" : "vLLM's default on CUDA"});
  }
  if (c.mla_decode_out != model::DecodeOutBuffer::transient && !d.model.is_mla())
    throw EngineConfigError("mla_decode_out", fmt::format("vllm mla_decode_out: '{}' applies to MLA models only, and model '{}' is not one",
                                 model::decode_out_buffer_name(c.mla_decode_out), d.model.name));
  if (is_mla_backend(*c.attention_backend) != d.model.is_mla())
    throw EngineConfigError("attention_backend", fmt::format("vllm attention_backend: {} is {} backend, but model '{}' {}",
                                 vllm_attention_backend_name(*c.attention_backend),
                                 is_mla_backend(*c.attention_backend) ? "an MLA" : "a multi-head attention",
                                 d.model.name, d.model.is_mla() ? "uses MLA" : "has no MLA"));

  std::optional<int> forced = vllm_forced_block_size(*c.attention_backend);
  if (c.block_size) require_at_least("vllm", "block_size", *c.block_size, 1);
  if (forced && c.block_size != forced) {
    c.block_size = forced;
    filled.push_back({"block_size", std::to_string(*forced),
                      fmt::format("forced by {} (§1.2)", vllm_attention_backend_name(*c.attention_backend))});
  } else if (!c.block_size) {
    c.block_size = 16;
    filled.push_back({"block_size", "16", "vLLM's CUDA default (§1.2)"});
  }

  VllmBatchDefaults batch = vllm_batch_defaults(d.total(), d.gpu.name, c.usage_context);
  std::string batch_why = fmt::format("{} default on {} ({} ≥ 70 GiB and not A100: {}) (§1.3)",
                                      usage_context_name(c.usage_context), d.gpu.name, format_bytes(d.total()),
                                      batch.max_num_seqs == 1024 ? "yes" : "no");
  if (!c.max_num_batched_tokens) {
    c.max_num_batched_tokens = batch.max_num_batched_tokens;
    filled.push_back({"max_num_batched_tokens", std::to_string(batch.max_num_batched_tokens), batch_why});
  }
  if (!c.max_num_seqs) {
    c.max_num_seqs = batch.max_num_seqs;
    filled.push_back({"max_num_seqs", std::to_string(batch.max_num_seqs), batch_why});
  }
  require_range("vllm", "max_num_seqs", *c.max_num_seqs, 1, limits::kMaxRunningRequests);
  require_range("vllm", "max_num_batched_tokens", *c.max_num_batched_tokens, 1, limits::kMaxBatchTokens);
  if (*c.max_num_batched_tokens < *c.max_num_seqs)
    throw EngineConfigError("max_num_batched_tokens", fmt::format("vllm max_num_batched_tokens: {} must be at least max_num_seqs ({})",
                                 *c.max_num_batched_tokens, *c.max_num_seqs));

  if (!c.max_model_len) {
    c.max_model_len = d.model.max_position;
    filled.push_back({"max_model_len", std::to_string(d.model.max_position), "the model's max_position_embeddings"});
  }
  require_range("vllm", "max_model_len", *c.max_model_len, 1, limits::kMaxContextTokens);
  if (*c.max_model_len > d.model.max_position)
    throw EngineConfigError("max_model_len", fmt::format("vllm max_model_len: {} is above the model's max_position_embeddings ({})",
                                 *c.max_model_len, d.model.max_position));

  require_at_least("vllm", "num_speculative_tokens", c.num_speculative_tokens, 0);
  if (c.enforce_eager && c.cudagraph_mode != CudaGraphMode::none) {
    c.cudagraph_mode = CudaGraphMode::none;
    filled.push_back({"cudagraph_mode", "NONE", "enforce_eager"});
  }
  if (c.cudagraph_capture_sizes) {
    require_sizes("vllm", "cudagraph_capture_sizes", *c.cudagraph_capture_sizes);
    c.cudagraph_capture_sizes = sorted_unique(*c.cudagraph_capture_sizes);
  } else {
    c.cudagraph_capture_sizes =
        vllm_cudagraph_capture_sizes(*c.max_num_seqs, *c.max_num_batched_tokens, c.num_speculative_tokens);
    filled.push_back({"cudagraph_capture_sizes", list(*c.cudagraph_capture_sizes),
                      "[1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16) (§1.5)"});
  }
  if (c.kv_cache_memory_bytes)
    require_at_least("vllm", "kv_cache_memory_bytes", static_cast<std::int64_t>(*c.kv_cache_memory_bytes), 1);
  if (c.num_gpu_blocks_override)
    require_range("vllm", "num_gpu_blocks_override", *c.num_gpu_blocks_override, 1, limits::kMaxKvBlocks);
  // Throws for a dtype the model cannot use.
  const model::KvLayout layout = checked_kv_layout(d, model::Engine::vllm, c.kv_cache_dtype, d.tp);
  if (c.kv_cache_memory_bytes && !c.num_gpu_blocks_override) {
    const Bytes page = model::vllm_page_size_bytes(layout, *c.block_size);
    const Bytes blocks =
        page == 0 || layout.layers <= 0 ? 0 : *c.kv_cache_memory_bytes / page / static_cast<Bytes>(layout.layers);
    if (blocks > static_cast<Bytes>(limits::kMaxKvBlocks))
      throw EngineConfigError("kv_cache_memory_bytes",
                              fmt::format("vllm kv_cache_memory_bytes: {} gives {} KV blocks of {} tokens, above the "
                                          "limit of {} (docs/limits.md); raise block_size or give less memory",
                                          *c.kv_cache_memory_bytes, blocks, *c.block_size, limits::kMaxKvBlocks));
  }
  return filled;
}

// ---------------------------------------------------------------------------------------------
// SGLang

std::string_view sglang_attention_backend_name(SglangAttentionBackend backend) {
  return backend == SglangAttentionBackend::flashinfer ? "flashinfer" : "aiter";
}

SglangAttentionBackend parse_sglang_attention_backend(std::string_view text, std::string_view what) {
  if (text == "flashinfer") return SglangAttentionBackend::flashinfer;
  if (text == "aiter") return SglangAttentionBackend::aiter;
  throw InputError(fmt::format("{}: expected one of flashinfer, aiter, got '{}'", what, text));
}

SglangGpuDefaults sglang_gpu_defaults(std::optional<double> gpu_mem_mib, int tp) {
  // server_args.py _handle_gpu_memory_settings (PR #10975), §2.1 table.
  if (!gpu_mem_mib) return {4096, 160};
  double g = *gpu_mem_mib;
  bool large_tp = tp >= 4;
  if (g < 20 * 1024) return {2048, 8};
  if (g < 35 * 1024) return {2048, large_tp ? 80 : 24};
  if (g < 60 * 1024) return {4096, large_tp ? 160 : 32};
  if (g < 90 * 1024) return {8192, large_tp ? 512 : 256};
  if (g < 160 * 1024) return {8192, large_tp ? 512 : 256};
  return {16384, 512};
}

double sglang_reserved_memory_mib(double gpu_mem_mib, int tp, std::int64_t chunked_prefill_size,
                                  int cuda_graph_max_bs, int pp, std::int64_t max_prefill_tokens) {
  // §2.1: 512 MiB of constant metadata, 1.5 MiB per prefill token (at least 2048), 2 MiB per
  // graph batch size, 1 GiB per 8 ranks; at least 10 GiB on GPUs above 60 GiB.
  std::int64_t prefill = chunked_prefill_size > 0 ? chunked_prefill_size : max_prefill_tokens;
  double reserved = 512.0;
  reserved += static_cast<double>(std::max<std::int64_t>(prefill, 2048)) * 1.5;
  reserved += static_cast<double>(cuda_graph_max_bs) * 2.0;
  reserved += static_cast<double>(tp) * static_cast<double>(pp) / 8.0 * 1024.0;
  if (gpu_mem_mib > 60 * 1024) reserved = std::max(reserved, 10.0 * 1024);
  return reserved;
}

double sglang_default_mem_fraction_static(std::optional<double> gpu_mem_mib, int tp,
                                          std::optional<std::int64_t> chunked_prefill_size,
                                          std::optional<int> cuda_graph_max_bs) {
  if (!gpu_mem_mib) return 0.88;  // §2.1 "unknown" row
  SglangGpuDefaults table = sglang_gpu_defaults(gpu_mem_mib, tp);
  double reserved =
      sglang_reserved_memory_mib(*gpu_mem_mib, tp, chunked_prefill_size.value_or(table.chunked_prefill_size),
                                 cuda_graph_max_bs.value_or(table.cuda_graph_max_bs));
  // Python's round(x, 3).
  return std::round((*gpu_mem_mib - reserved) / *gpu_mem_mib * 1000.0) / 1000.0;
}

double sglang_aiter_mem_fraction_static(double mem_fraction_static, SglangAttentionBackend backend,
                                        std::int64_t context_length) {
  // §2.5: ModelRunner.model_specific_adjustment / _handle_attention_backend_compatibility.
  if (backend == SglangAttentionBackend::aiter && context_length > 8192) return mem_fraction_static * 0.85;
  return mem_fraction_static;
}

std::vector<int> sglang_cuda_graph_batch_sizes(int cuda_graph_max_bs, std::int64_t req_to_token_pool_size) {
  // §2.3 list; cuda_graph_runner.py get_batch_sizes_to_capture.
  std::vector<int> sizes = {1, 2, 4, 8, 12};
  for (int s = 16; s < 257; s += 8) sizes.push_back(s);
  for (int s = 272; s < 512; s += 16) sizes.push_back(s);
  for (int s = 512; s <= cuda_graph_max_bs; s += 32) sizes.push_back(s);
  if (sizes.back() > req_to_token_pool_size) {
    sizes.push_back(static_cast<int>(req_to_token_pool_size) - 1);
    sizes.push_back(static_cast<int>(req_to_token_pool_size));
  }
  std::vector<int> kept;
  for (int s : sorted_unique(sizes))
    if (s >= 1 && s <= req_to_token_pool_size && s <= cuda_graph_max_bs) kept.push_back(s);
  return kept;
}

std::vector<FilledDefault> resolve(SglangConfig& c, const Deployment& d) {
  validate_deployment(d);
  std::vector<FilledDefault> filled;
  if (!c.gpu_memory_capacity_mib) {
    c.gpu_memory_capacity_mib = static_cast<double>(d.total()) / static_cast<double>(MiB);
    filled.push_back({"gpu_memory_capacity_mib", fmt::format("{}", *c.gpu_memory_capacity_mib),
                      "the device total (nvidia-smi may report more)"});
  }
  if (!(*c.gpu_memory_capacity_mib > 0))
    throw EngineConfigError("gpu_memory_capacity_mib", fmt::format("sglang gpu_memory_capacity_mib: expected a value above 0, got {}",
                                 *c.gpu_memory_capacity_mib));
  SglangGpuDefaults table = sglang_gpu_defaults(c.gpu_memory_capacity_mib, d.tp);
  std::string table_why = fmt::format("§2.1 table for {:.0f} MiB, tp {}", *c.gpu_memory_capacity_mib, d.tp);
  if (!c.chunked_prefill_size) {
    c.chunked_prefill_size = table.chunked_prefill_size;
    filled.push_back({"chunked_prefill_size", std::to_string(table.chunked_prefill_size), table_why});
  }
  if (*c.chunked_prefill_size != -1)
    require_range("sglang", "chunked_prefill_size", *c.chunked_prefill_size, 1, limits::kMaxBatchTokens);
  if (!c.cuda_graph_max_bs) {
    c.cuda_graph_max_bs = table.cuda_graph_max_bs;
    filled.push_back({"cuda_graph_max_bs", std::to_string(table.cuda_graph_max_bs), table_why});
  }
  require_at_least("sglang", "cuda_graph_max_bs", *c.cuda_graph_max_bs, 1);
  require_range("sglang", "max_prefill_tokens", c.max_prefill_tokens, 1, limits::kMaxBatchTokens);

  if (!c.mem_fraction_static) {
    double reserved = sglang_reserved_memory_mib(*c.gpu_memory_capacity_mib, d.tp, *c.chunked_prefill_size,
                                                 *c.cuda_graph_max_bs, 1, c.max_prefill_tokens);
    c.mem_fraction_static =
        std::round((*c.gpu_memory_capacity_mib - reserved) / *c.gpu_memory_capacity_mib * 1000.0) / 1000.0;
    filled.push_back({"mem_fraction_static", fmt::format("{}", *c.mem_fraction_static),
                      fmt::format("round(({:.0f} - {:.0f} reserved MiB) / {:.0f}, 3) (§2.1)",
                                  *c.gpu_memory_capacity_mib, reserved, *c.gpu_memory_capacity_mib)});
  }
  if (!(*c.mem_fraction_static > 0.0 && *c.mem_fraction_static < 1.0))
    throw EngineConfigError(
        "mem_fraction_static",
        fmt::format("sglang mem_fraction_static: expected a value in (0, 1), got {}", *c.mem_fraction_static));

  if (!c.context_length) {
    c.context_length = d.model.max_position;
    filled.push_back({"context_length", std::to_string(d.model.max_position), "the model's max_position_embeddings"});
  }
  require_range("sglang", "context_length", *c.context_length, 1, limits::kMaxContextTokens);
  if (!c.attention_backend) {
    bool amd = d.gpu.vendor == "amd";
    c.attention_backend = amd ? SglangAttentionBackend::aiter : SglangAttentionBackend::flashinfer;
    filled.push_back({"attention_backend", std::string(sglang_attention_backend_name(*c.attention_backend)),
                      amd ? "SGLang's ROCm backend with aiter" : "SGLang's FlashInfer backend on CUDA"});
  }
  if (*c.attention_backend == SglangAttentionBackend::aiter && d.model.is_mla())
    throw EngineConfigError("attention_backend", fmt::format("sglang attention_backend: aiter's MLA path is not modelled (model '{}' uses MLA); "
                                 "use flashinfer",
                                 d.model.name));
  require_at_least("sglang", "page_size", c.page_size, 1);
  if (!(c.schedule_conservativeness > 0))
    throw EngineConfigError("schedule_conservativeness", fmt::format("sglang schedule_conservativeness: expected a value above 0, got {}",
                                 c.schedule_conservativeness));
  if (c.max_running_requests)
    require_range("sglang", "max_running_requests", *c.max_running_requests, 1, limits::kMaxRunningRequests);
  if (c.max_total_tokens) require_range("sglang", "max_total_tokens", *c.max_total_tokens, 1, limits::kMaxKvTokens);
  if (c.cuda_graph_bs) {
    require_sizes("sglang", "cuda_graph_bs", *c.cuda_graph_bs);
    c.cuda_graph_bs = sorted_unique(*c.cuda_graph_bs);
  }
  checked_kv_layout(d, model::Engine::sglang, c.kv_cache_dtype, d.tp);  // throws for a dtype the model cannot use
  return filled;
}

// ---------------------------------------------------------------------------------------------
// LightLLM

std::int64_t lightllm_default_batch_max_tokens(std::int64_t max_req_total_len, std::int64_t chunked_prefill_size,
                                               bool chunked_prefill) {
  // lightllm/server/api_start.py (§3).
  if (!chunked_prefill) return max_req_total_len;
  return std::min(max_req_total_len, 2 * chunked_prefill_size + 256);
}

std::vector<int> lightllm_graph_batch_sizes(int graph_max_batch_size, int graph_split_batch_size,
                                            int graph_grow_step_size) {
  std::vector<int> sizes;
  for (int s = 1; s <= graph_split_batch_size && s < graph_max_batch_size; ++s) sizes.push_back(s);
  for (int s = graph_split_batch_size + graph_grow_step_size; s < graph_max_batch_size; s += graph_grow_step_size)
    sizes.push_back(s);
  sizes.push_back(graph_max_batch_size);
  return sorted_unique(sizes);
}

std::vector<FilledDefault> resolve(LightllmConfig& c, const Deployment& d) {
  validate_deployment(d);
  std::vector<FilledDefault> filled;
  require_fraction("lightllm", "mem_fraction", c.mem_fraction);
  require_range("lightllm", "running_max_req_size", c.running_max_req_size, 1, limits::kMaxRunningRequests);
  require_range("lightllm", "max_req_total_len", c.max_req_total_len, 1, limits::kMaxContextTokens);
  require_range("lightllm", "chunked_prefill_size", c.chunked_prefill_size, 1, limits::kMaxBatchTokens);
  require_at_least("lightllm", "graph_max_batch_size", c.graph_max_batch_size, 1);
  require_at_least("lightllm", "graph_split_batch_size", c.graph_split_batch_size, 1);
  require_at_least("lightllm", "graph_grow_step_size", c.graph_grow_step_size, 1);
  if (!c.batch_max_tokens) {
    c.batch_max_tokens =
        lightllm_default_batch_max_tokens(c.max_req_total_len, c.chunked_prefill_size, !c.disable_chunked_prefill);
    filled.push_back({"batch_max_tokens", std::to_string(*c.batch_max_tokens),
                      c.disable_chunked_prefill ? "max_req_total_len without chunked prefill (§3)"
                                                : "min(max_req_total_len, 2 × chunked_prefill_size + 256) (§3)"});
  }
  require_range("lightllm", "batch_max_tokens", *c.batch_max_tokens, 1, limits::kMaxBatchTokens);
  if (!c.graph_max_len_in_batch) {
    c.graph_max_len_in_batch = c.max_req_total_len;
    filled.push_back({"graph_max_len_in_batch", std::to_string(c.max_req_total_len), "max_req_total_len (§3)"});
  }
  require_range("lightllm", "graph_max_len_in_batch", *c.graph_max_len_in_batch, 1, limits::kMaxContextTokens);
  if (c.max_total_token_num)
    require_range("lightllm", "max_total_token_num", *c.max_total_token_num, 1, limits::kMaxKvTokens);
  checked_kv_layout(d, model::Engine::lightllm, model::KvCacheDtype::model, d.tp);
  return filled;
}

model::Engine engine_of(const EngineConfig& config) { return engine_traits(config).id; }

}  // namespace headroom::engine
