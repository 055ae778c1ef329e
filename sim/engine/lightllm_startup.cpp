// LightLLM start-up (docs/serving-memory-model.md §3): TpPartBaseModel.__init__ — weights, the KV
// memory manager sized by mem_fraction, _check_mem_size, the request manager, decode CUDA graphs,
// then _check_max_len_infer (one prefill of batch_max_tokens as a single request) and empty_cache.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/core/checked.hpp"
#include "sim/engine/engine_registry.hpp"
#include "sim/engine/startup.hpp"
#include "sim/model/step_program.hpp"

namespace headroom::engine {

std::int64_t lightllm_kv_tokens(Bytes free_after_weights, Bytes device_total, double mem_fraction, Bytes cell) {
  // mem_manager.py profile_size: (available − total × (1 − mem_fraction)) GiB × 2^30 / cell.
  double available = static_cast<double>(free_after_weights) - static_cast<double>(device_total) * (1.0 - mem_fraction);
  if (cell == 0) return 0;
  return static_cast<std::int64_t>(std::floor(available / static_cast<double>(cell)));
}

Bytes lightllm_req_to_token_bytes(std::int64_t running_max_req_size, std::int64_t batch_max_tokens,
                                  std::int64_t max_req_total_len) {
  // req_manager.py: torch.zeros((max_request_num + 1, max_sequence_length), dtype=torch.int32), with
  // max_request_num = running_max_req_size + 8 and max_seq_length = max_req_total_len + 8.
  auto rows = static_cast<Bytes>(running_max_req_size + 8 + 1);
  auto cols = static_cast<Bytes>(std::max(batch_max_tokens, max_req_total_len + 8));
  return rows * cols * 4;
}

namespace {

// basemodel.py _check_max_len_infer.
constexpr const char* kCheckMaxLenMessage =
    "check max len infer fail, you can try:1.Set the --mem_fraction or --max_total_token_num startup parameter "
    "to a smaller value.2.Set the --max_req_total_len to a smaller value.3.Set the --batch_max_tokens startup "
    "parameter to a smaller value.";

}  // namespace

StartupResult lightllm_startup(const Deployment& d, LightllmConfig c, const StartupDirectives& directives) {
  StartupResult r;
  r.engine = model::Engine::lightllm;
  r.filled = resolve(c, d);
  r.config = c;
  LightllmFigures f;
  f.batch_max_tokens = *c.batch_max_tokens;
  f.max_req_num = c.running_max_req_size + 8;
  r.kv_block_tokens = 1;
  r.max_running_requests = c.running_max_req_size;
  r.sampler.kind = model::SamplerKind::native;  // torch top-k/top-p sorting in post-processing
  r.memory = make_serving_memory(d);
  ServingMemory& m = r.memory;
  alloc::CachingAllocator& a = *m.allocator;
  auto finish = [&]() -> StartupResult {
    r.figures = f;
    finish_bytes(r);
    return std::move(r);
  };

  const Bytes free_before_weights = measured_free(m);
  if (!load_weights(r, d)) return finish();
  f.free_after_weights = measured_free(m);

  // Memory manager (§3): one tensor [L, size + 1, 2·Hkv, D] (MLA: [L, size + 1, 1, 576]).
  model::KvLayout layout = model::kv_layout(d.model, engine_traits(model::Engine::lightllm).kv_pool, model::KvCacheDtype::model, d.tp);
  f.cell = layout.bytes_per_token;
  std::int64_t tokens = c.max_total_token_num
                            ? *c.max_total_token_num
                            : lightllm_kv_tokens(f.free_after_weights, d.total(), c.mem_fraction, f.cell);
  if (directives.kv_sizer) {
    KvSizingInputs in{d, r};
    in.free_before_weights = free_before_weights;
    in.free_after_weights = f.free_after_weights;
    in.non_torch_at_start = m.device->total() - free_before_weights;
    in.kv_bytes_per_token = f.cell;
    in.prefill_tokens = f.batch_max_tokens;
    in.batch_seqs = std::min(c.running_max_req_size, f.batch_max_tokens);
    in.max_graph_batch = c.disable_cudagraph ? 0 : c.graph_max_batch_size;
    if (!c.disable_cudagraph)
      in.graph_sizes =
          lightllm_graph_batch_sizes(c.graph_max_batch_size, c.graph_split_batch_size, c.graph_grow_step_size);
    in.workspace_bytes = [](std::int64_t) -> Bytes { return 0; };
    std::optional<std::int64_t> decided = decide_kv_tokens(directives, in, tokens);
    if (!decided) return finish();
    tokens = *decided;
  }
  const std::int64_t heads = layout.mla ? 1 : 2 * layout.kv_heads;
  if (tokens + 1 < 0) {
    fail(r, StartupStage::kv_cache_sizing,
         fmt::format("Trying to create tensor with negative dimension {}: [{}, {}, {}, {}]", tokens + 1, layout.layers,
                     tokens + 1, heads, layout.head_dim));
    return finish();
  }
  r.kv_tokens = tokens;
  r.kv_blocks = tokens;
  const std::optional<Bytes> kv_bytes = checked_mul(static_cast<Bytes>(tokens + 1), layout.bytes_per_token);
  if (!kv_bytes)
    throw EngineConfigError("max_total_token_num",
                            fmt::format("lightllm max_total_token_num: {} tokens of {} bytes do not fit in 64 bits",
                                        tokens, layout.bytes_per_token));
  if (!allocate_kv_cache(r, d, 1, *kv_bytes)) return finish();
  r.log.push_back(fmt::format("kv cache size: {} tokens, {}", tokens, format_bytes(r.bytes.kv_cache)));

  // _check_mem_size.
  if (tokens <= f.batch_max_tokens && !directives.skip_capacity_checks) {
    fail(r, StartupStage::kv_cache_sizing, "max_total_token_num must be greater than batch_max_tokens");
    return finish();
  }
  const std::int64_t max_seq_length = c.max_req_total_len + 8;
  if (max_seq_length > tokens && !directives.skip_capacity_checks) {
    fail(r, StartupStage::kv_cache_sizing,
         fmt::format("max_total_token_num must be >= max_seq_length, got max_total_token_num={}, max_seq_length={}. "
                     "Try set --max_req_total_len a smaller value < {}.",
                     tokens, max_seq_length, tokens));
    return finish();
  }

  // Request manager: req_to_token_indexs.
  if (!allocate_request_pool(
          r, d, lightllm_req_to_token_bytes(c.running_max_req_size, f.batch_max_tokens, c.max_req_total_len)))
    return finish();

  // The first forward creates the cuBLAS workspaces outside the allocator (§5).
  initialise_cublas(m, d);
  if (!c.disable_cudagraph) {
    std::vector<int> sizes =
        lightllm_graph_batch_sizes(c.graph_max_batch_size, c.graph_split_batch_size, c.graph_grow_step_size);
    if (!capture_decode_graphs(r, d, sizes)) return finish();
    r.graph_batch_sizes = sizes;
  }

  // _check_max_len_infer: batch_max_tokens tokens as one request, softmax/argmax on its logits.
  if (!c.disable_check_max_len_infer) {
    model::SamplerOptions greedy;
    greedy.kind = model::SamplerKind::greedy;
    model::AllocationProgram check =
        model::step_program(d.model, model::ForwardShape{f.batch_max_tokens, 1, 0, d.tp}, r.forward, greedy);
    model::ProgramRun run;
    if (!run_eager(r, check, run)) {
      r.oom = *run.oom;
      fail(r, StartupStage::max_len_check, kCheckMaxLenMessage);
      return finish();
    }
    f.check_peak = run.peak_allocated;
    r.log.push_back(fmt::format("check max_len {} infer ok", f.batch_max_tokens));
  }
  a.empty_cache();
  if (!allocate_canary(r, d, directives.canary)) return finish();
  r.ok = true;
  r.stage = StartupStage::serving;
  return finish();
}

}  // namespace headroom::engine
