// LightLLM's command line as data (engine_flags.hpp): `python -m lightllm.server.api_server
// --model_dir MODEL`. Flag names, forms and defaults from ModelTC/LightLLM
// lightllm/server/api_cli.py at tag v1.2.0 (make_argument_parser); its flags are spelt with
// underscores, and headroom reads --a-b as --a_b too.
#include "sim/engine/engine_flags.hpp"

#include <array>

namespace headroom::engine {

namespace {

using F = FlagForm;
using V = FlagValue;

constexpr std::array<std::string_view, 1> kLightllmLaunchers = {"python -m lightllm.server.api_server"};

constexpr EngineFlag kLightllmFlags[] = {
    model_flag("--model_dir"),
    tp_flag("--tp"),
    // Parallelism (docs/scenario.md `parallel:`): --dp is data-parallel attention inside --tp.
    parallel_flag("--dp", "dp", V::whole),
    parallel_flag("--disable_custom_allreduce", "custom_all_reduce", V::choice, F::store_true, "true=false"),
    // Knobs headroom models (docs/scenario.md, LightLLM).
    knob_flag("--mem_fraction", "mem_fraction", V::fraction),
    knob_flag("--max_total_token_num", "max_total_token_num", V::whole),
    knob_flag("--batch_max_tokens", "batch_max_tokens", V::whole),
    knob_flag("--running_max_req_size", "running_max_req_size", V::whole),
    knob_flag("--max_req_total_len", "max_req_total_len", V::whole),
    knob_flag("--chunked_prefill_size", "chunked_prefill_size", V::whole),
    knob_flag("--disable_chunked_prefill", "disable_chunked_prefill", V::boolean, F::store_true),
    knob_flag("--graph_max_batch_size", "graph_max_batch_size", V::whole),
    knob_flag("--graph_split_batch_size", "graph_split_batch_size", V::whole),
    knob_flag("--graph_grow_step_size", "graph_grow_step_size", V::whole),
    knob_flag("--graph_max_len_in_batch", "graph_max_len_in_batch", V::whole),
    knob_flag("--disable_cudagraph", "disable_cudagraph", V::boolean, F::store_true),
    // Memory headroom does not model: an error unless the value is the one that changes nothing.
    unmodelled_flag("--quant_type", "quantised weights and kernels", "none"),
    unmodelled_flag("--data_type", "the weights' dtype; headroom takes the model's"),
    unmodelled_flag("--nnodes", "ranks on other nodes", "1"),
    unmodelled_flag("--run_mode", "disaggregated prefill and decode", "normal"),
    unmodelled_flag("--mtp_mode", "a draft model for multi-token prediction"),
    unmodelled_flag("--enable_prefill_cudagraph", "prefill CUDA graphs", "", F::store_true),
    unmodelled_flag("--enable_decode_microbatch_overlap", "decode micro-batches", "", F::store_true),
    unmodelled_flag("--llm_prefill_att_backend", "the attention backend's buffers", "auto", F::values),
    unmodelled_flag("--llm_decode_att_backend", "the attention backend's buffers", "auto", F::values),
    unmodelled_flag("--router_token_ratio", "the router's admission"),
    unmodelled_flag("--visual_tp", "the multimodal encoder", "1"),
    // No effect on GPU memory or step time.
    ignored_flag("--host"), ignored_flag("--port"), ignored_flag("--httpserver_workers"),
    ignored_flag("--model_name"), ignored_flag("--tokenizer_mode"), ignored_flag("--trust_remote_code", F::store_true),
    ignored_flag("--eos_id", F::values), ignored_flag("--tool_call_parser"), ignored_flag("--reasoning_parser"),
    ignored_flag("--node_rank"), ignored_flag("--nccl_host"), ignored_flag("--nccl_port"),
    ignored_flag("--detail_log", F::store_true), ignored_flag("--health_monitor", F::store_true),
    ignored_flag("--use_dynamic_prompt_cache", F::store_true),
    // headroom's LightLLM keeps no prompt cache, which is what this flag asks for.
    ignored_flag("--disable_dynamic_prompt_cache", F::store_true),
    ignored_flag("--enable_cpu_cache", F::store_true), ignored_flag("--enable_mps", F::store_true),
};

// DISABLE_CHECK_MAX_LEN_INFER: LightLLM skips its start-up max-length prefill when it is set to
// anything (lightllm/common/basemodel/basemodel.py, v1.2.0: os.getenv(...) is not None).
constexpr EngineEnvVar kEnv[] = {
    {"DISABLE_CHECK_MAX_LEN_INFER", "disable_check_max_len_infer", V::boolean, ""},
};

}  // namespace

const EngineCommandLine& lightllm_command_line() {
  static const EngineCommandLine c{
      .launchers = kLightllmLaunchers,
      .positional_model = false,
      .flags = kLightllmFlags,
      .env = kEnv,
      .parser_source = "ModelTC/LightLLM lightllm/server/api_cli.py at tag v1.2.0",
      .docs_anchor = "docs/import.md#lightllm",
  };
  return c;
}

}  // namespace headroom::engine
