// SGLang's command line as data (engine_flags.hpp): `python -m sglang.launch_server --model-path
// MODEL`. Flag names and aliases from sgl-project/sglang python/sglang/srt/server_args.py
// (ServerArgs: each field's flag is its name with dashes, `aliases` add the long forms, e.g.
// tp_size: --tp-size, --tensor-parallel-size; stored main, commit 001067f). `--tp` and `--dp` are
// the abbreviations argparse accepts for --tp-size and --dp-size, as SGLang's own docs write them.
#include "sim/engine/engine_flags.hpp"

#include <array>

namespace headroom::engine {

namespace {

using F = FlagForm;
using V = FlagValue;

constexpr std::array<std::string_view, 1> kSglangLaunchers = {"python -m sglang.launch_server"};

constexpr EngineFlag kSglangFlags[] = {
    model_flag("--model-path --model"),
    tp_flag("--tp-size --tensor-parallel-size --tp"),
    // Parallelism (docs/scenario.md `parallel:`).
    parallel_flag("--pp-size --pipeline-parallel-size", "pp", V::whole),
    parallel_flag("--dp-size --data-parallel-size --dp", "dp", V::whole),
    parallel_flag("--ep-size --expert-parallel-size --ep", "ep", V::whole),
    parallel_flag("--enable-dp-attention", "dp_attention", V::boolean, F::store_true),
    parallel_flag("--disable-custom-all-reduce", "custom_all_reduce", V::choice, F::store_true, "true=false"),
    // Knobs headroom models (docs/scenario.md, SGLang).
    knob_flag("--mem-fraction-static", "mem_fraction_static", V::fraction),
    knob_flag("--chunked-prefill-size", "chunked_prefill_size", V::whole, F::value, -1),
    knob_flag("--max-prefill-tokens", "max_prefill_tokens", V::whole),
    knob_flag("--max-running-requests", "max_running_requests", V::whole),
    knob_flag("--max-total-tokens", "max_total_tokens", V::whole),
    knob_flag("--cuda-graph-max-bs", "cuda_graph_max_bs", V::whole),
    knob_flag("--cuda-graph-bs", "cuda_graph_bs", V::whole_list, F::values),
    knob_flag("--disable-cuda-graph", "disable_cuda_graph", V::boolean, F::store_true),
    knob_flag("--context-length", "context_length", V::whole),
    knob_flag("--attention-backend", "attention_backend", V::choice, F::value, 1, "flashinfer=flashinfer aiter=aiter torch_native=torch_native fa3=fa3"),
    knob_flag("--page-size", "page_size", V::whole),
    knob_flag("--schedule-conservativeness", "schedule_conservativeness", V::positive),
    knob_flag("--kv-cache-dtype", "kv_cache_dtype", V::choice, F::value, 1, "auto=auto bf16=bf16 bfloat16=bf16 fp8_e4m3=fp8 fp8_e5m2=fp8"),
    knob_flag("--sampling-backend", "sampling_backend", V::choice, F::value, 1, "flashinfer=flashinfer pytorch=native"),
    // The SWA KV pool of gpt-oss (model_config.py is_hybrid_swa_model) and the prefix cache.
    knob_flag("--swa-full-tokens-ratio", "swa_full_tokens_ratio", V::positive),
    knob_flag("--disable-hybrid-swa-memory", "disable_hybrid_swa_memory", V::boolean, F::store_true),
    knob_flag("--disable-radix-cache", "disable_radix_cache", V::boolean, F::store_true),
    // Memory headroom does not model: an error unless the value is the one that changes nothing.
    unmodelled_flag("--quantization", "quantised weights and kernels"),
    unmodelled_flag("--dtype", "the weights' dtype; headroom takes the model's", "auto"),
    unmodelled_flag("--dcp-size --decode-context-parallel-size", "decode context parallelism", "1"),
    unmodelled_flag("--nnodes", "ranks on other nodes", "1"),
    unmodelled_flag("--enable-dp-lm-head", "data-parallel attention", "", F::store_true),
    unmodelled_flag("--moe-a2a-backend", "expert-parallel all-to-all buffers", "none"),
    // server_args.py --moe-runner-backend (auto: Triton's fused MoE for the formats modelled here);
    // the FlashInfer, cutlass, DeepGEMM and TRT-LLM runners allocate workspaces not modelled.
    unmodelled_flag("--moe-runner-backend", "the FlashInfer, cutlass, DeepGEMM and TRT-LLM MoE runners' workspaces", "auto triton"),
    unmodelled_flag("--deepep-mode", "expert-parallel all-to-all buffers"),
    unmodelled_flag("--enable-lora", "LoRA adapter slots", "", F::store_true),
    unmodelled_flag("--lora-paths", "LoRA adapter slots", "", F::values),
    unmodelled_flag("--max-loras-per-batch", "LoRA adapter slots"),
    unmodelled_flag("--max-lora-rank", "LoRA adapter slots"),
    unmodelled_flag("--speculative-algorithm", "a draft model and speculative tokens"),
    unmodelled_flag("--speculative-draft-model-path", "a draft model"),
    unmodelled_flag("--speculative-num-steps", "speculative decoding"),
    unmodelled_flag("--speculative-eagle-topk", "speculative decoding"),
    unmodelled_flag("--speculative-num-draft-tokens", "speculative decoding"),
    unmodelled_flag("--cpu-offload-gb", "weights offloaded to the CPU", "0"),
    unmodelled_flag("--enable-hierarchical-cache", "the host KV cache tier", "", F::store_true),
    unmodelled_flag("--schedule-policy", "the admission order; headroom models fcfs", "fcfs"),
    unmodelled_flag("--enable-mixed-chunk", "mixed prefill and decode batches", "", F::store_true),
    unmodelled_flag("--enable-torch-compile", "torch.compile's graphs", "", F::store_true),
    unmodelled_flag("--torch-compile-max-bs", "torch.compile's graphs"),
    unmodelled_flag("--cuda-graph-config", "the CUDA graph set-up"),
    unmodelled_flag("--disable-overlap-schedule", "the overlap scheduler's step times", "", F::store_true),
    unmodelled_flag("--enable-two-batch-overlap", "two-batch overlap", "", F::store_true),
    unmodelled_flag("--disaggregation-mode", "disaggregated prefill and decode", "null"),
    unmodelled_flag("--load-format", "the weights' format", "auto safetensors pt dummy"),
    unmodelled_flag("--json-model-override-args", "the model's config.json"),
    unmodelled_flag("--enable-multimodal", "multimodal inputs", "", F::store_true),
    unmodelled_flag("--max-queued-requests", "requests refused when the queue is full"),
    unmodelled_flag("--device", "a device other than a GPU", "cuda"),
    unmodelled_flag("--config", "flags read from a YAML file; paste them instead"),
    // No effect on GPU memory or step time.
    ignored_flag("--host"), ignored_flag("--port"), ignored_flag("--api-key"), ignored_flag("--served-model-name"),
    ignored_flag("--tokenizer-path"), ignored_flag("--tokenizer-mode"), ignored_flag("--trust-remote-code", F::store_true),
    ignored_flag("--revision"), ignored_flag("--download-dir"), ignored_flag("--chat-template"),
    ignored_flag("--log-level"), ignored_flag("--log-level-http"), ignored_flag("--log-requests", F::store_true),
    ignored_flag("--log-requests-level"), ignored_flag("--show-time-cost", F::store_true),
    ignored_flag("--enable-metrics", F::store_true), ignored_flag("--decode-log-interval"),
    ignored_flag("--random-seed"), ignored_flag("--stream-interval"), ignored_flag("--skip-server-warmup", F::store_true),
    ignored_flag("--watchdog-timeout"), ignored_flag("--dist-init-addr --nccl-init-addr"), ignored_flag("--node-rank"),
    ignored_flag("--tool-call-parser"), ignored_flag("--reasoning-parser"), ignored_flag("--grammar-backend"),
    ignored_flag("--base-gpu-id"), ignored_flag("--gpu-id-step"), ignored_flag("--file-storage-path"),
    ignored_flag("--enable-cache-report", F::store_true), ignored_flag("--kv-events-config"),
    ignored_flag("--enable-trace", F::store_true), ignored_flag("--otlp-traces-endpoint"),
    ignored_flag("--model-loader-extra-config"),
};

}  // namespace

const EngineCommandLine& sglang_command_line() {
  static const EngineCommandLine c{
      .launchers = kSglangLaunchers,
      .positional_model = false,
      .flags = kSglangFlags,
      .env = {},
      .parser_source = "sgl-project/sglang python/sglang/srt/server_args.py at commit 001067f (main)",
      .docs_anchor = "docs/import.md#sglang",
  };
  return c;
}

}  // namespace headroom::engine
