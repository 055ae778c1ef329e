#include "sim/engine/sglang_config.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/core/enum_names.hpp"
#include "sim/core/error.hpp"
#include "sim/engine/knob_checks.hpp"
#include "sim/model/attention_layers.hpp"
#include "sim/model/tensor_parallel.hpp"

namespace headroom::engine {

using namespace knob_checks;

namespace {

constexpr std::array<EnumName<SglangAttentionBackend>, 4> kSglangAttentionBackendNames{{
    {SglangAttentionBackend::flashinfer, "flashinfer"},
    {SglangAttentionBackend::aiter, "aiter"},
    {SglangAttentionBackend::torch_native, "torch_native"},
    {SglangAttentionBackend::fa3, "fa3"},
}};

}  // namespace

std::string_view sglang_attention_backend_name(SglangAttentionBackend backend) {
  return enum_name(kSglangAttentionBackendNames, backend);
}

SglangAttentionBackend parse_sglang_attention_backend(std::string_view text, std::string_view what) {
  return parse_enum(kSglangAttentionBackendNames, text, what);
}

bool sglang_hybrid_swa_model(const model::ModelConfig& model) {
  // configs/model_config.py is_hybrid_swa_model also lists MiMo-V2 and Step-3.5, which this
  // simulator does not serve. Llama 4's chunked layers take the SWA pool with attention_chunk_size
  // as their window (model_runner.py load_model: "Setting sliding_window_size to be
  // attention_chunk_size").
  if (model.architecture == model::Architecture::llama4) return model::has_chunked_attention(model);
  return model.architecture == model::Architecture::gpt_oss && model::has_sliding_window(model);
}

bool sglang_hybrid_swa(const model::ModelConfig& model, const SglangConfig& config) {
  return sglang_hybrid_swa_model(model) && !config.disable_hybrid_swa_memory;
}

SglangSwaTokens sglang_hybrid_swa_tokens(std::int64_t max_total_num_tokens, int full_layers, int swa_layers,
                                         double swa_full_tokens_ratio, int page_size) {
  // model_runner_kv_cache_mixin.py set_num_tokens_hybrid_swa (sgl-project/sglang commit 226149ac):
  // Python's int() of float quotients, then each rounded down to the page.
  const double total = static_cast<double>(max_total_num_tokens) * (full_layers + swa_layers);
  const double denominator = swa_full_tokens_ratio * swa_layers + full_layers;
  SglangSwaTokens t;
  t.full = static_cast<std::int64_t>(total / denominator);
  t.swa = static_cast<std::int64_t>(static_cast<double>(t.full) * swa_full_tokens_ratio);
  t.full = t.full / page_size * page_size;
  t.swa = t.swa / page_size * page_size;
  return t;
}

std::vector<Bytes> sglang_fa3_graph_buffers(int max_bs, std::int64_t context_len, int page_size, bool swa_pool,
                                            std::int64_t attention_chunk) {
  // layers/attention/flashattention_backend.py init_cuda_graph_state (sgl-project/sglang main,
  // 2026): decode_cuda_graph_metadata; page_table_draft_decode and the target-verify and
  // draft-extend tables only with speculative decoding, encoder_metadata only for encoder-decoder
  // models.
  const auto bs = static_cast<Bytes>(max_bs);
  const auto pages = static_cast<Bytes>((context_len + page_size - 1) / page_size);
  std::vector<Bytes> sizes = {bs * 4, (bs + 1) * 4, (bs + 1) * 4, bs * pages * 4, pages * 8};
  if (attention_chunk > 0) {
    // decode_cuda_graph_local_attn_metadata (attention_chunk_size set: Llama 4): max_bs ×
    // ceil(context / chunk) virtual batches of ceil(chunk / page) pages, int32.
    const auto virtual_batches = bs * static_cast<Bytes>((context_len + attention_chunk - 1) / attention_chunk);
    const auto chunk_pages = static_cast<Bytes>((attention_chunk + page_size - 1) / page_size);
    sizes.push_back((virtual_batches + 1) * 4);            // local_query_start_loc
    sizes.push_back(virtual_batches * 4);                  // local_seqused_k
    sizes.push_back(virtual_batches * chunk_pages * 4);    // local_block_table
  }
  if (swa_pool) sizes.push_back(bs * pages * 4);  // swa_page_table (use_sliding_window_kv_pool)
  return sizes;
}

SglangGpuDefaults sglang_gpu_defaults(std::optional<double> gpu_mem_mib, int tp, SglangMemoryDefaultsRule rule) {
  if (rule == SglangMemoryDefaultsRule::by_tp_size) {
    // server_args.py @ v0.4.6 __post_init__: "gpu_mem is not None and gpu_mem < 25_000".
    const bool small = gpu_mem_mib && *gpu_mem_mib < 25000;
    return {small ? 2048 : 8192, small ? (tp < 4 ? 8 : 80) : 160};
  }
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
                                  int cuda_graph_max_bs, int pp, std::int64_t max_prefill_tokens, int dp_attention_dp) {
  // §2.1: 512 MiB of constant metadata, 1.5 MiB per prefill token (at least 2048), 2 MiB per
  // graph batch size, 1 GiB per 8 ranks; at least 10 GiB on GPUs above 60 GiB.
  std::int64_t prefill = chunked_prefill_size > 0 ? chunked_prefill_size : max_prefill_tokens;
  double reserved = 512.0;
  reserved += static_cast<double>(std::max<std::int64_t>(prefill, 2048)) * 1.5;
  reserved += static_cast<double>(cuda_graph_max_bs) * 2.0;
  reserved += static_cast<double>(tp) * static_cast<double>(pp) / 8.0 * 1024.0;
  // server_args.py _handle_gpu_memory_settings (PR #10975): DP attention pads its batches.
  if (dp_attention_dp > 0) {
    reserved += static_cast<double>(cuda_graph_max_bs) * dp_attention_dp * 3.0;
    if (cuda_graph_max_bs > 300) reserved += static_cast<double>(cuda_graph_max_bs) * dp_attention_dp * 1.5;
  }
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

double sglang_0_4_mem_fraction_static(int tp) {
  // server_args.py @ v0.4.6 __post_init__ (0.81 at tp 8; 0.83 in earlier 0.3/0.4 releases).
  if (tp >= 16) return 0.79;
  if (tp >= 8) return 0.81;
  if (tp >= 4) return 0.85;
  if (tp >= 2) return 0.87;
  return 0.88;
}

double sglang_aiter_mem_fraction_static(double mem_fraction_static, SglangAttentionBackend backend,
                                        std::int64_t context_length) {
  // §2.5: ModelRunner.model_specific_adjustment / _handle_attention_backend_compatibility.
  if (backend == SglangAttentionBackend::aiter && context_length > 8192) return mem_fraction_static * 0.85;
  return mem_fraction_static;
}

std::vector<int> sglang_cuda_graph_batch_sizes(int cuda_graph_max_bs, std::int64_t req_to_token_pool_size,
                                               SglangGraphSizesRule rule, std::optional<double> gpu_mem_mib, int dp) {
  std::vector<int> sizes;
  if (rule == SglangGraphSizesRule::up_to_160) {
    // cuda_graph_runner.py @ v0.4.6 get_batch_sizes_to_capture.
    sizes = {1, 2, 4, 8};
    for (int s = 16; s < 161; s += 8) sizes.push_back(s);
    if (gpu_mem_mib && *gpu_mem_mib > 81920 && dp == 1)
      for (int s = 160; s < 257; s += 8) sizes.push_back(s);
  } else {
    // §2.3 list; cuda_graph_runner.py get_batch_sizes_to_capture.
    sizes = {1, 2, 4, 8, 12};
    for (int s = 16; s < 257; s += 8) sizes.push_back(s);
    for (int s = 272; s < 512; s += 16) sizes.push_back(s);
    for (int s = 512; s <= cuda_graph_max_bs; s += 32) sizes.push_back(s);
  }
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
  const SglangVersionRules& version = sglang_version_rules(c.version);
  const bool old_defaults = version.memory_defaults == SglangMemoryDefaultsRule::by_tp_size;
  SglangGpuDefaults table = sglang_gpu_defaults(c.gpu_memory_capacity_mib, d.tp, version.memory_defaults);
  std::string table_why = old_defaults ? fmt::format("SGLang {} for {:.0f} MiB (25,000 MiB threshold), tp {} (§2.6)",
                                                     version.name, *c.gpu_memory_capacity_mib, d.tp)
                                       : fmt::format("§2.1 table for {:.0f} MiB, tp {}", *c.gpu_memory_capacity_mib, d.tp);
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

  if (!c.mem_fraction_static && old_defaults) {
    c.mem_fraction_static = sglang_0_4_mem_fraction_static(d.tp);
    filled.push_back({"mem_fraction_static", fmt::format("{}", *c.mem_fraction_static),
                      fmt::format("SGLang {} by tp {} (§2.6)", version.name, d.tp)});
  }
  if (!c.mem_fraction_static) {
    double reserved = sglang_reserved_memory_mib(*c.gpu_memory_capacity_mib, d.tp, *c.chunked_prefill_size,
                                                 *c.cuda_graph_max_bs, d.parallel.pp, c.max_prefill_tokens,
                                                 d.parallel.dp_attention ? d.parallel.dp : 0);
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
  if (!c.attention_backend && !sglang_hybrid_swa_model(d.model)) {  // gpt-oss: below
    bool amd = d.gpu.vendor == "amd";
    c.attention_backend = amd ? SglangAttentionBackend::aiter : SglangAttentionBackend::flashinfer;
    filled.push_back({"attention_backend", std::string(sglang_attention_backend_name(*c.attention_backend)),
                      amd ? "SGLang's ROCm backend with aiter" : "SGLang's FlashInfer backend on CUDA"});
  }
  if (c.attention_backend == SglangAttentionBackend::aiter && d.model.is_mla())  // unset for gpt-oss until below
    throw EngineConfigError("attention_backend", fmt::format("sglang attention_backend: aiter's MLA path is not modelled (model '{}' uses MLA); "
                                 "use flashinfer",
                                 d.model.name));
  if (sglang_hybrid_swa_model(d.model)) {
    // server_args.py _handle_model_specific_adjustments, GptOssForCausalLM and (PR #13421)
    // Llama4ForConditionalGeneration: trtllm_mha on Blackwell, fa3 on Hopper, aiter on ROCm, triton
    // elsewhere; gpt-oss asserts one of triton, trtllm_mha, fa3, fa4 or aiter, Llama 4 one of fa3,
    // aiter, triton, ascend, trtllm_mha or intel_xpu. Of those only fa3's buffers are modelled.
    const bool llama4 = d.model.architecture == model::Architecture::llama4;
    const std::string_view arch = model::architecture_name(d.model.architecture);
    // The SWA pool, SWARadixCache (PR #7367, v0.4.9.post2) and gpt-oss all came after v0.4.6; the SWA
    // rules are modelled at sgl-project/sglang main @ 99fab2ce6 (§2.2), and how v0.4.6 kept Llama 4's
    // local-attention layers is not.
    if (c.version == SglangVersion::v0_4)
      throw EngineConfigError(
          "version",
          fmt::format("sglang: model '{}' ({}) on SGLang 0.4 (v0.4.6) is not modelled: that release predates "
                      "SWARadixCache (PR #7367, v0.4.9.post2) and the SWA KV pool headroom models for version "
                      "current (sgl-project/sglang @ 99fab2ce6); use version current",
                      d.model.name, arch));
    const int major = d.gpu.compute_capability_major();
    if (!c.attention_backend && d.gpu.vendor != "amd" && major == 9) {
      c.attention_backend = SglangAttentionBackend::fa3;
      filled.push_back({"attention_backend", "fa3",
                        fmt::format("SGLang's backend for {} on Hopper (server_args.py)", llama4 ? "Llama 4" : "gpt-oss")});
    }
    if (c.attention_backend != SglangAttentionBackend::fa3) {
      const std::string chosen =
          c.attention_backend ? std::string(sglang_attention_backend_name(*c.attention_backend))
          : d.gpu.vendor == "amd" ? "aiter"
          : major >= 10           ? "trtllm_mha"
                                  : "triton";
      throw EngineConfigError(
          "attention_backend",
          fmt::format("sglang attention_backend: model '{}' ({}) runs on {} here, which is not modelled; "
                      "SGLang serves {} on {} and headroom models fa3 "
                      "(Hopper, compute capability 9.x; gpu '{}' is {})",
                      d.model.name, arch, chosen, llama4 ? "Llama 4" : "gpt-oss",
                      llama4 ? "fa3, aiter, triton, ascend, trtllm_mha or intel_xpu" : "triton, trtllm_mha, fa3, fa4 or aiter",
                      d.gpu.name,
                      d.gpu.compute_capability.empty() ? std::string("of unknown compute capability")
                                                       : "compute capability " + d.gpu.compute_capability));
    }
    if (!(c.swa_full_tokens_ratio > 0) || !std::isfinite(c.swa_full_tokens_ratio))
      throw EngineConfigError("swa_full_tokens_ratio",
                              fmt::format("sglang swa_full_tokens_ratio: expected a value above 0, got {}",
                                          c.swa_full_tokens_ratio));
    if (!c.disable_hybrid_swa_memory && d.parallel.pp > 1)
      throw EngineConfigError("kind", fmt::format("sglang: the SWA KV pool with pipeline parallelism (pp {}) is not "
                                                  "modelled; use pp 1 or --disable-hybrid-swa-memory",
                                                  d.parallel.pp));
  } else if (model::has_sliding_window(d.model)) {
    // Gemma 2 and 3 are not hybrid-SWA models there: MHATokenToKVPool keeps every layer's KV for
    // every token and only FlashInfer's kernels apply the window (flashinfer_backend.py, two wrappers
    // dispatched by SLIDING_WINDOW).
    if (*c.attention_backend != SglangAttentionBackend::flashinfer)
      throw EngineConfigError(
          "attention_backend",
          fmt::format("sglang attention_backend: {}'s sliding-window path is not modelled (model '{}' has "
                      "sliding-window layers); use flashinfer",
                      sglang_attention_backend_name(*c.attention_backend), d.model.name));
  }
  if (*c.attention_backend == SglangAttentionBackend::fa3) {
    if (d.gpu.vendor == "amd")
      throw EngineConfigError("attention_backend", fmt::format("sglang attention_backend: fa3 is a CUDA backend "
                                                               "(gpu '{}' is AMD); use aiter",
                                                               d.gpu.name));
    if (d.model.is_mla())
      throw EngineConfigError("attention_backend",
                              fmt::format("sglang attention_backend: fa3's MLA path is not modelled (model '{}' uses "
                                          "MLA); use flashinfer",
                                          d.model.name));
  }
  if (*c.attention_backend == SglangAttentionBackend::torch_native) {
    if (d.model.is_mla() || d.model.is_moe())
      throw EngineConfigError("attention_backend",
                              fmt::format("sglang attention_backend: torch_native is modelled for dense models only "
                                          "(model '{}' is {})",
                                          d.model.name, d.model.is_mla() ? "MLA" : "MoE"));
    // server_args.py _handle_attention_backend_compatibility: "Cuda graph is disabled because of
    // using torch native attention backend".
    if (!c.disable_cuda_graph) {
      c.disable_cuda_graph = true;
      filled.push_back({"disable_cuda_graph", "true", "SGLang disables CUDA graphs with the torch_native backend"});
    }
  }
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
  checked_kv_layout(d, model::Engine::sglang, c.kv_cache_dtype);  // throws for a dtype the model cannot use
  return filled;
}

}  // namespace headroom::engine
