// vLLM's command line as data (engine_flags.hpp): `vllm serve MODEL` or
// `python -m vllm.entrypoints.openai.api_server --model MODEL`. Flag names, aliases and forms from
// vllm-project/vllm vllm/engine/arg_utils.py (EngineArgs.add_cli_args, commit 99d7eb5, the v0.11
// series): boolean fields are argparse BooleanOptionalAction (--x / --no-x); max_model_len,
// max_num_batched_tokens and kv_cache_memory_bytes take human_readable_int ("32k"). The server's
// own flags (--host, --port, --api-key, ...) are vllm/entrypoints/openai/cli_args.py's.
#include "sim/engine/engine_flags.hpp"

#include <array>

namespace headroom::engine {

namespace {

using F = FlagForm;
using V = FlagValue;

constexpr std::array<std::string_view, 2> kVllmLaunchers = {"vllm serve", "python -m vllm.entrypoints.openai.api_server"};

constexpr EngineFlag kVllmFlags[] = {
    model_flag("--model"),
    tp_flag("--tensor-parallel-size -tp"),
    // Parallelism (docs/scenario.md `parallel:`): --enable-expert-parallel spans every tp × dp rank.
    parallel_flag("--pipeline-parallel-size -pp", "pp", V::whole),
    parallel_flag("--data-parallel-size -dp", "dp", V::whole),
    parallel_flag("--enable-expert-parallel", "ep", V::boolean, F::optional_bool),
    parallel_flag("--disable-custom-all-reduce", "custom_all_reduce", V::choice, F::optional_bool, "true=false false=true"),
    // Knobs headroom models (docs/scenario.md, vLLM).
    knob_flag("--gpu-memory-utilization", "gpu_memory_utilization", V::fraction),
    knob_flag("--max-num-seqs", "max_num_seqs", V::whole),
    knob_flag("--max-num-batched-tokens", "max_num_batched_tokens", V::human_whole),
    knob_flag("--block-size", "block_size", V::whole),
    knob_flag("--max-model-len", "max_model_len", V::human_whole),
    knob_flag("--enable-prefix-caching", "enable_prefix_caching", V::boolean, F::optional_bool),
    knob_flag("--cudagraph-capture-sizes --cuda-graph-sizes", "cudagraph_capture_sizes", V::whole_list, F::values),
    knob_flag("--enforce-eager", "enforce_eager", V::boolean, F::optional_bool),
    // CacheDType: auto, bfloat16, fp8, fp8_e4m3, fp8_e5m2, fp8_inc, fp8_ds_mla (fp8_inc is not modelled).
    knob_flag("--kv-cache-dtype", "kv_cache_dtype", V::choice, F::value, 1, "auto=auto bfloat16=bf16 fp8=fp8 fp8_e4m3=fp8 fp8_e5m2=fp8 fp8_ds_mla=fp8_ds_mla"),
    knob_flag("--kv-cache-memory-bytes --kv-cache-memory", "kv_cache_memory_bytes", V::human_whole),
    knob_flag("--num-gpu-blocks-override", "num_gpu_blocks_override", V::whole),
    knob_flag("--disable-hybrid-kv-cache-manager", "disable_hybrid_kv_cache_manager", V::boolean, F::optional_bool),
    // vllm/config/kernel.py KernelConfig.moe_backend (MoEBackend; vllm#49476 at v0.25.1): of its
    // choices the two whose buffers headroom models (§4b); `auto` picks by quantization and GPU.
    knob_flag("--moe-backend", "moe_backend", V::choice, F::value, 1, "triton=triton flashinfer_cutlass=flashinfer_cutlass"),
    // Memory headroom does not model: an error unless the value is the one that changes nothing.
    unmodelled_flag("--quantization -q", "quantised weights and kernels", "None"),
    unmodelled_flag("--dtype", "the weights' dtype; headroom takes the model's", "auto"),
    unmodelled_flag("--decode-context-parallel-size -dcp", "decode context parallelism", "1"),
    unmodelled_flag("--enable-eplb", "redundant experts", "false", F::optional_bool),
    unmodelled_flag("--eplb-config", "redundant experts"),
    unmodelled_flag("--num-redundant-experts", "redundant experts", "0"),
    unmodelled_flag("--enable-lora", "LoRA adapter slots", "false", F::optional_bool),
    unmodelled_flag("--max-loras", "LoRA adapter slots"),
    unmodelled_flag("--max-lora-rank", "LoRA adapter slots"),
    unmodelled_flag("--max-cpu-loras", "LoRA adapter slots"),
    unmodelled_flag("--fully-sharded-loras", "LoRA adapter slots", "false", F::optional_bool),
    unmodelled_flag("--lora-dtype", "LoRA adapter slots"),
    unmodelled_flag("--lora-extra-vocab-size", "LoRA adapter slots"),
    unmodelled_flag("--lora-modules", "LoRA adapters", "", F::values),
    unmodelled_flag("--cpu-offload-gb", "weights offloaded to the CPU", "0"),
    unmodelled_flag("--speculative-config", "a draft model and speculative tokens"),
    unmodelled_flag("--compilation-config -O", "the compilation and CUDA graph set-up; set cudagraph_mode or cudagraph_capture_sizes in the scenario instead"),
    unmodelled_flag("--max-cudagraph-capture-size", "the largest CUDA graph batch"),
    unmodelled_flag("--enable-chunked-prefill", "prefill without chunking", "true", F::optional_bool),
    unmodelled_flag("--max-num-partial-prefills", "concurrent partial prefills", "1"),
    unmodelled_flag("--max-long-partial-prefills", "concurrent partial prefills", "1"),
    unmodelled_flag("--long-prefill-token-threshold", "concurrent partial prefills", "0"),
    unmodelled_flag("--num-lookahead-slots", "KV slots reserved ahead", "0"),
    unmodelled_flag("--async-scheduling", "overlapped scheduling", "false", F::optional_bool),
    unmodelled_flag("--calculate-kv-scales", "KV scale computation", "false", F::optional_bool),
    unmodelled_flag("--disable-sliding-window", "the KV of sliding-window layers", "false", F::optional_bool),
    unmodelled_flag("--kv-sharing-fast-prefill", "KV sharing", "false", F::optional_bool),
    unmodelled_flag("--mamba-cache-dtype", "the Mamba state cache", "auto"),
    unmodelled_flag("--mamba-ssm-cache-dtype", "the Mamba state cache", "auto"),
    unmodelled_flag("--mamba-block-size", "the Mamba state cache"),
    unmodelled_flag("--hf-overrides", "the model's config.json"),
    unmodelled_flag("--hf-config-path", "the model's config.json"),
    unmodelled_flag("--rope-scaling", "the model's config.json"),
    unmodelled_flag("--rope-theta", "the model's config.json"),
    unmodelled_flag("--override-attention-dtype", "the attention dtype"),
    unmodelled_flag("--load-format", "the weights' format", "auto safetensors pt dummy"),
    unmodelled_flag("--model-impl", "the model implementation", "auto vllm"),
    unmodelled_flag("--runner", "a pooling model", "auto generate"),
    unmodelled_flag("--convert", "a pooling model", "auto none"),
    unmodelled_flag("--task", "a pooling model", "auto generate"),
    unmodelled_flag("--enable-prompt-embeds", "prompt embeddings", "false", F::optional_bool),
    unmodelled_flag("--limit-mm-per-prompt", "multimodal inputs"),
    unmodelled_flag("--mm-encoder-tp-mode", "the multimodal encoder"),
    unmodelled_flag("--skip-mm-profiling", "the multimodal encoder's profile", "false", F::optional_bool),
    unmodelled_flag("--kv-transfer-config", "KV transfer for disaggregated serving"),
    unmodelled_flag("--enable-dbo", "dual-batch overlap", "false", F::optional_bool),
    unmodelled_flag("--all2all-backend", "expert-parallel all-to-all buffers"),
    unmodelled_flag("--enable-sleep-mode", "the sleep-mode allocator", "false", F::optional_bool),
    unmodelled_flag("--config", "flags read from a YAML file; paste them instead"),
    // No effect on GPU memory or step time.
    ignored_flag("--host"), ignored_flag("--port"), ignored_flag("--uds"), ignored_flag("--api-key"),
    ignored_flag("--uvicorn-log-level"), ignored_flag("--disable-uvicorn-access-log", F::optional_bool),
    ignored_flag("--allow-credentials", F::optional_bool), ignored_flag("--allowed-origins"),
    ignored_flag("--allowed-methods"), ignored_flag("--allowed-headers"), ignored_flag("--chat-template"),
    ignored_flag("--chat-template-content-format"), ignored_flag("--response-role"), ignored_flag("--ssl-keyfile"),
    ignored_flag("--ssl-certfile"), ignored_flag("--ssl-ca-certs"), ignored_flag("--ssl-cert-reqs"),
    ignored_flag("--root-path"), ignored_flag("--middleware"), ignored_flag("--served-model-name", F::values),
    ignored_flag("--return-tokens-as-token-ids", F::optional_bool),
    ignored_flag("--disable-frontend-multiprocessing", F::optional_bool),
    ignored_flag("--enable-request-id-headers", F::optional_bool),
    ignored_flag("--enable-auto-tool-choice", F::optional_bool), ignored_flag("--tool-call-parser"),
    ignored_flag("--tool-parser-plugin"), ignored_flag("--log-config-file"), ignored_flag("--max-log-len"),
    ignored_flag("--disable-fastapi-docs", F::optional_bool),
    ignored_flag("--enable-prompt-tokens-details", F::optional_bool),
    ignored_flag("--enable-server-load-tracking", F::optional_bool),
    ignored_flag("--enable-force-include-usage", F::optional_bool),
    ignored_flag("--enable-log-outputs", F::optional_bool), ignored_flag("--headless", F::optional_bool),
    ignored_flag("--api-server-count -asc"), ignored_flag("--data-parallel-address -dpa"),
    ignored_flag("--data-parallel-rpc-port -dpp"), ignored_flag("--data-parallel-rank -dpn"),
    ignored_flag("--data-parallel-start-rank -dpr"), ignored_flag("--data-parallel-size-local -dpl"),
    ignored_flag("--data-parallel-backend -dpb"), ignored_flag("--data-parallel-hybrid-lb", F::optional_bool),
    ignored_flag("--tokenizer"), ignored_flag("--tokenizer-mode"), ignored_flag("--tokenizer-revision"),
    ignored_flag("--trust-remote-code", F::optional_bool), ignored_flag("--revision"), ignored_flag("--code-revision"),
    ignored_flag("--download-dir"), ignored_flag("--hf-token"), ignored_flag("--safetensors-load-strategy"),
    ignored_flag("--use-tqdm-on-load", F::optional_bool), ignored_flag("--pt-load-map-location"),
    ignored_flag("--model-loader-extra-config"), ignored_flag("--ignore-patterns", F::values),
    ignored_flag("--config-format"), ignored_flag("--allowed-local-media-path"),
    ignored_flag("--allowed-media-domains", F::values), ignored_flag("--seed"),
    ignored_flag("--disable-log-stats", F::optional_bool), ignored_flag("--disable-log-requests", F::optional_bool),
    ignored_flag("--enable-log-requests", F::optional_bool), ignored_flag("--aggregate-engine-logging", F::optional_bool),
    ignored_flag("--otlp-traces-endpoint"), ignored_flag("--collect-detailed-traces"),
    ignored_flag("--show-hidden-metrics-for-version"), ignored_flag("--generation-config"),
    ignored_flag("--override-generation-config"), ignored_flag("--logits-processor-pattern"),
    ignored_flag("--logits-processors", F::values), ignored_flag("--io-processor-plugin"),
    ignored_flag("--worker-cls"), ignored_flag("--worker-extension-cls"),
    ignored_flag("--ray-workers-use-nsight", F::optional_bool), ignored_flag("--max-parallel-loading-workers"),
    ignored_flag("--distributed-executor-backend"),
    ignored_flag("--scheduling-policy"), ignored_flag("--scheduler-cls"), ignored_flag("--reasoning-parser"),
    ignored_flag("--structured-outputs-config"), ignored_flag("--guided-decoding-backend"),
    ignored_flag("--max-logprobs"), ignored_flag("--logprobs-mode"),
    ignored_flag("--skip-tokenizer-init", F::optional_bool), ignored_flag("--prefix-caching-hash-algo"),
    // CPU memory only: the swap space and the multimodal processor cache live in host memory.
    ignored_flag("--swap-space"), ignored_flag("--mm-processor-cache-gb"),
    ignored_flag("--disable-cascade-attn", F::optional_bool), ignored_flag("--kv-events-config"),
};

// vllm/envs.py: VLLM_ATTENTION_BACKEND picks the attention backend, VLLM_USE_FLASHINFER_SAMPLER=1
// the FlashInfer sampler (docs/scenario.md, `sampler`).
constexpr EngineEnvVar kEnv[] = {
    {"VLLM_ATTENTION_BACKEND", "attention_backend", V::choice,
     "FLASH_ATTN=FLASH_ATTN FLASHINFER=FLASHINFER FLASHMLA=FLASHMLA CUTLASS_MLA=CUTLASS_MLA TRITON_MLA=TRITON_MLA"},
    {"VLLM_USE_FLASHINFER_SAMPLER", "sampler", V::choice, "1=flashinfer 0=native"},
};

}  // namespace

const EngineCommandLine& vllm_command_line() {
  static const EngineCommandLine c{
      .launchers = kVllmLaunchers,
      .positional_model = true,
      .flags = kVllmFlags,
      .env = kEnv,
      .parser_source = "vllm-project/vllm vllm/engine/arg_utils.py at commit 99d7eb5 (v0.11 series)",
      .docs_anchor = "docs/import.md#vllm",
  };
  return c;
}

}  // namespace headroom::engine
