// headroom model MODEL --tokens T --seqs N: one rank's memory facts for a model and a step shape:
// weights, KV bytes per token in the engine's layout, and the forward pass's and the sampler's
// activation peaks run through the caching allocator model, with a per-layer breakdown.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/allocator/caching_allocator.hpp"
#include "sim/cli/commands.hpp"
#include "sim/core/error.hpp"
#include "sim/core/out_of_memory.hpp"
#include "sim/engine/engine_registry.hpp"
#include "sim/model/model_source.hpp"
#include "sim/model/catalogue.hpp"
#include "sim/model/hf_config.hpp"
#include "sim/model/attention_layers.hpp"
#include "sim/model/kv_layout.hpp"
#include "sim/model/model_limits.hpp"
#include "sim/model/program_runner.hpp"
#include "sim/model/step_program.hpp"
#include "sim/model/weights.hpp"

namespace headroom::cli {

namespace {

// The FlashInfer workspace the engine allocates, or an InputError where its size is not known.
Bytes flashinfer_workspace(const engine::EngineTraits& engine) {
  if (engine.flashinfer_workspace) return *engine.flashinfer_workspace;
  throw InputError(
      fmt::format("attention backend flashinfer: no FlashInfer workspace size is known for {}", engine.name));
}

struct ModelArgs {
  std::string model;
  std::int64_t tokens = 8192;  // vLLM's max_num_batched_tokens on ≥70 GiB GPUs (docs/serving-memory-model.md §1.3)
  std::int64_t seqs = 1;
  std::int64_t decode_seqs = 0;
  bool decode_seqs_given = false;  // default: all when tokens == seqs, else none
  int tp = 1;
  std::string kv_dtype = "auto";
  std::string engine = "vllm";
  std::string sampler = "native";
  std::string attention = "flash-attn";
  std::string attention_workspace;
  std::int64_t moe_chunk = model::kVllmFusedMoeChunkSize;
  bool moe_inplace = false;
  std::string mla_decode_out = "transient";
  std::int64_t decode_out_rows = 1024;
  bool eager = false;
  bool json = false;
};

// A device no program fills: the command reports what a step needs, not whether it fits.
constexpr Bytes kUnlimited = Bytes{1} << 50;

struct Measured {
  model::ProgramFigures figures;
  model::ProgramRun run;
};

Measured measure(const model::AllocationProgram& program) {
  device::DeviceSpec spec;
  spec.name = "unlimited";
  spec.total = kUnlimited;
  device::Device device(spec);
  alloc::CachingAllocator allocator(device);
  model::SlotTable slots;
  Measured m{model::program_figures(program), model::run_program(allocator, program, slots)};
  slots.release(allocator);
  return m;
}

void require_positive(std::int64_t value, const char* flag, std::int64_t limit) {
  if (value < 1) throw InputError(fmt::format("{}: expected at least 1, got {}", flag, value));
  if (value > limit) throw InputError(fmt::format("{}: {} is above the limit of {} (docs/limits.md)", flag, value, limit));
}

std::string layer_kind(const model::ModelConfig& m, int layer) {
  return fmt::format("{}+{}", m.is_mla() ? "mla" : "attention", m.is_moe_layer(layer) ? "moe" : "mlp");
}

std::string group_name(int first, int last) {
  return first == last ? fmt::format("{}", first) : fmt::format("{}-{}", first, last);
}

// 838860800 → "838,860,800".
std::string grouped(Bytes n) {
  std::string digits = fmt::format("{}", n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string count_text(std::int64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

void run_model(const ModelArgs& a) {
  require_positive(a.tokens, "--tokens", model::limits::kMaxStepTokens);
  require_positive(a.seqs, "--seqs", model::limits::kMaxStepSeqs);
  require_positive(a.tp, "--tp", model::limits::kMaxTensorParallel);
  require_positive(a.moe_chunk, "--moe-chunk", model::limits::kMaxStepTokens);
  require_positive(a.decode_out_rows, "--decode-out-rows", model::limits::kMaxStepSeqs);
  const engine::EngineTraits& engine = engine::engine_named(a.engine, "--engine");
  model::KvCacheDtype kv_dtype = model::parse_kv_cache_dtype(a.kv_dtype, "--kv-dtype");
  model::SamplerOptions sampler;
  sampler.kind = model::parse_sampler_kind(a.sampler, "--sampler");
  model::ForwardOptions forward;
  forward.attention = model::parse_attention_backend(a.attention, "--attention");
  if (!a.attention_workspace.empty())
    forward.attention_workspace = parse_bytes(a.attention_workspace, "--attention-workspace");
  else if (forward.attention == model::AttentionBackend::flashinfer)
    forward.attention_workspace = flashinfer_workspace(engine);
  forward.caller_holds_layer_input = a.eager;
  forward.moe_chunk_tokens = a.moe_chunk;
  forward.moe_output_inplace = a.moe_inplace;
  forward.mla_decode_out = model::parse_decode_out_buffer(a.mla_decode_out, "--mla-decode-out");
  forward.mla_decode_out_rows = a.decode_out_rows;

  model::ModelConfig config = model::load_model(a.model);
  if (a.seqs > a.tokens)
    throw InputError(fmt::format("--seqs: {} sequences need at least as many tokens, got --tokens {}", a.seqs, a.tokens));
  model::ForwardShape shape{a.tokens, a.seqs, a.decode_seqs, a.tp};
  if (!a.decode_seqs_given) shape.decode_seqs = a.tokens == a.seqs ? a.seqs : 0;
  if (shape.decode_seqs < 0 || shape.decode_seqs > a.seqs)
    throw InputError(fmt::format("--decode-seqs: expected 0 to --seqs ({}), got {}", a.seqs, a.decode_seqs));
  if (shape.decode_seqs == a.seqs && a.tokens != a.seqs)
    throw InputError(fmt::format("--decode-seqs: all {} sequences decode one token each, so --tokens must be {}, got {}",
                                 a.seqs, a.seqs, a.tokens));

  model::WeightOptions wo;
  wo.tp = a.tp;
  model::WeightList weights = model::model_weights(config, wo);
  std::int64_t published = model::parameter_count(config);
  model::KvLayout kv = model::kv_layout(config, engine.kv_pool, kv_dtype, a.tp);

  model::AllocationProgram fwd = model::forward_program(config, shape, forward);
  model::AllocationProgram smp = model::sampler_program(config, a.seqs, a.tp, sampler);
  model::AllocationProgram step = model::step_program(config, shape, forward, sampler);
  Measured f = measure(fwd), s = measure(smp), st = measure(step);
  const model::ProgramRun& fr = f.run;

  if (a.json) {
    nlohmann::json j;
    j["model"] = config.name;
    j["architecture"] = model::architecture_name(config.architecture);
    // The shapes kernels/record_steps.py builds a model from (one source of truth: this catalogue).
    j["config"] = {{"layers", config.layers},         {"hidden", config.hidden},
                   {"intermediate", config.intermediate}, {"heads", config.heads},
                   {"kv_heads", config.kv_heads},     {"head_dim", config.head_dim},
                   {"vocab", config.vocab},           {"dtype", model::dtype_name(config.dtype)},
                   {"qkv_bias", config.qkv_bias},     {"qk_norm", config.has_qk_norm()},
                   {"moe", config.is_moe()},          {"mla", config.is_mla()}};
    j["tp"] = a.tp;
    j["engine"] = std::string(engine.name);
    j["weights"] = {{"bytes_per_rank", weights.bytes},
                    {"parameters_per_rank", weights.parameters},
                    {"parameters", published}};
    j["kv_cache"] = {{"dtype", model::kv_cache_dtype_name(kv_dtype)},
                     {"bytes_per_token", kv.bytes_per_token},
                     {"bytes_per_token_per_layer", kv.bytes_per_token_per_layer},
                     {"sliding_window", config.sliding_window},
                     {"sliding_window_layers", config.sliding_layers.size()},
                     {"attention_chunk_size", config.attention_chunk},
                     {"chunked_local_layers", config.chunked_layers.size()}};
    j["step"] = {{"tokens", shape.tokens}, {"seqs", shape.seqs}, {"decode_seqs", shape.decode_seqs}};
    auto program_json = [](const Measured& m, const model::AllocationProgram& p) {
      return nlohmann::json{{"requested_peak_bytes", m.figures.peak},
                            {"peak_tensor", model::tensor_name(p.ops[m.figures.peak_op].tensor)},
                            {"peak_layer", p.ops[m.figures.peak_op].layer},
                            {"persistent_bytes", m.figures.persistent},
                            {"allocations", m.figures.allocations},
                            {"allocated_peak_bytes", m.run.peak_allocated},
                            {"reserved_peak_bytes", m.run.peak_reserved}};
    };
    j["forward"] = program_json(f, fwd);
    j["forward"]["attention"] = model::attention_backend_name(forward.attention);
    j["sampler"] = program_json(s, smp);
    j["sampler"]["kind"] = model::sampler_kind_name(sampler.kind);
    j["step_total"] = program_json(st, step);
    j["layers"] = nlohmann::json::array();
    for (int l = 0; l < config.layers; ++l) {
      const model::LayerRun& lr = fr.layers[static_cast<std::size_t>(l)];
      j["layers"].push_back({{"layer", l},
                             {"kind", layer_kind(config, l)},
                             {"entry_bytes", lr.entry_allocated},
                             {"peak_bytes", lr.peak_allocated},
                             {"transient_bytes", lr.peak_allocated - lr.entry_allocated},
                             {"peak_tensor", model::tensor_name(fwd.ops[lr.peak_op].tensor)}});
    }
    fmt::print("{}\n", j.dump(2));
    return;
  }

  fmt::print("{} ({}), tensor parallel {}, {} layout\n", config.name, model::architecture_name(config.architecture),
             a.tp, engine.name);
  fmt::print("  weights          {} per rank ({:.2f} billion parameters on this rank, {:.2f} billion in the model)\n",
             format_bytes(weights.bytes), static_cast<double>(weights.parameters) / 1e9,
             static_cast<double>(published) / 1e9);
  fmt::print("  KV cache         {} per token ({} per token and layer, {} layers, kv dtype {})\n",
             format_bytes(kv.bytes_per_token), format_bytes(kv.bytes_per_token_per_layer), kv.layers,
             model::kv_cache_dtype_name(kv_dtype));
  // The figure above sizes every layer in full; vLLM keeps only the window of the windowed layers
  // (serving-memory-model.md §1.2b).
  if (model::has_sliding_window(config))
    fmt::print("  sliding window   {} of {} layers attend to the last {} tokens (vLLM: their own KV cache groups, blocks "
               "freed as they leave the window)\n",
               config.sliding_layers.size(), config.layers, config.sliding_window);
  if (model::has_chunked_attention(config))
    fmt::print("  chunked local    {} of {} layers attend within their chunk of {} tokens (vLLM: their own KV cache "
               "groups, blocks before the current chunk freed; SGLang: its SWA pool, the chunk as the window)\n",
               config.chunked_layers.size(), config.layers, config.attention_chunk);
  fmt::print("  step             {} over {}: {} decoding, {} prefill tokens\n",
             count_text(shape.tokens, "token", "tokens"), count_text(shape.seqs, "sequence", "sequences"),
             shape.decode_seqs, shape.tokens - shape.decode_seqs);
  const model::ProgramOp& peak_op = fwd.ops[f.figures.peak_op];
  fmt::print("  activation peak  {} allocated, {} reserved ({} B requested, at layer {} '{}'; {})\n",
             format_bytes(fr.peak_allocated), format_bytes(fr.peak_reserved), grouped(f.figures.peak), peak_op.layer,
             model::tensor_name(peak_op.tensor), model::attention_backend_name(forward.attention));
  if (f.figures.persistent > 0)
    fmt::print("  persistent       {} kept after the step (attention workspace, cached decode buffers)\n",
               format_bytes(f.figures.persistent));
  fmt::print("  sampler peak     {} allocated, {} reserved ({} sampler over {}, vocabulary {})\n",
             format_bytes(s.run.peak_allocated), format_bytes(s.run.peak_reserved), model::sampler_kind_name(sampler.kind),
             count_text(shape.seqs, "sequence", "sequences"), config.vocab);
  fmt::print("  step peak        {} allocated, {} reserved (forward, then sampling with the final hidden states alive)\n",
             format_bytes(st.run.peak_allocated), format_bytes(st.run.peak_reserved));

  // Consecutive layers of one kind with the same transient peak, reached at the same tensor, share a
  // row; entry and peak then show the group's range (persistent buffers make them grow).
  auto transient = [&](int l) {
    const model::LayerRun& lr = fr.layers[static_cast<std::size_t>(l)];
    return lr.peak_allocated - lr.entry_allocated;
  };
  auto peak_tensor = [&](int l) { return fwd.ops[fr.layers[static_cast<std::size_t>(l)].peak_op].tensor; };
  auto range = [](Bytes lo, Bytes hi) {
    return lo == hi ? format_bytes(lo) : fmt::format("{} .. {}", format_bytes(lo), format_bytes(hi));
  };
  std::vector<std::vector<std::string>> rows = {{"layers", "kind", "at entry", "peak", "transient", "peak at"}};
  int first = 0;
  for (int l = 0; l < config.layers; ++l) {
    if (l + 1 < config.layers && transient(l + 1) == transient(l) && peak_tensor(l + 1) == peak_tensor(l) &&
        layer_kind(config, l + 1) == layer_kind(config, l))
      continue;
    const model::LayerRun& lo = fr.layers[static_cast<std::size_t>(first)];
    const model::LayerRun& hi = fr.layers[static_cast<std::size_t>(l)];
    rows.push_back({group_name(first, l), layer_kind(config, l), range(lo.entry_allocated, hi.entry_allocated),
                    range(lo.peak_allocated, hi.peak_allocated), format_bytes(transient(l)),
                    std::string(model::tensor_name(peak_tensor(l)))});
    first = l + 1;
  }
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  fmt::print("\nper-layer breakdown (allocated above the forward's start, through the allocator model)\n");
  for (const auto& row : rows)
    fmt::print("  {:<{}}  {:<{}}  {:>{}}  {:>{}}  {:>{}}  {}\n", row[0], width[0], row[1], width[1], row[2], width[2],
               row[3], width[3], row[4], width[4], row[5]);
}

}  // namespace

void add_model_command(CLI::App& app) {
  auto a = std::make_shared<ModelArgs>();
  auto* cmd = app.add_subcommand("model", "Weights, KV bytes per token and the activation peaks of one step, per rank");
  cmd->add_option("model", a->model, "Catalogue name or Hugging Face id (e.g. Llama-3.1-8B), or a config.json / its folder")
      ->required();
  cmd->add_option("--tokens", a->tokens, "Tokens in the step (T)")->capture_default_str();
  cmd->add_option("--seqs", a->seqs, "Sequences in the step (N); the sampler samples N rows")->capture_default_str();
  cmd->add_option_function<std::int64_t>(
      "--decode-seqs", [a](const std::int64_t& n) { a->decode_seqs = n, a->decode_seqs_given = true; },
      "How many of the N sequences decode one token each (default: all when T == N, else none)");
  cmd->add_option("--tp", a->tp, "Tensor parallel size")->capture_default_str();
  cmd->add_option("--kv-dtype", a->kv_dtype, "KV cache dtype: auto, bf16, fp16, fp8, fp8_ds_mla")->capture_default_str();
  cmd->add_option("--engine", a->engine, "KV layout and workspace defaults: vllm, sglang, lightllm")->capture_default_str();
  cmd->add_option("--sampler", a->sampler, "Sampler path: greedy, native (top-k/top-p in PyTorch), flashinfer")
      ->capture_default_str();
  cmd->add_option("--attention", a->attention, "Attention backend: flash-attn, flashinfer")->capture_default_str();
  cmd->add_option("--attention-workspace", a->attention_workspace,
                  "Persistent attention workspace, e.g. 256MiB (default: the engine's FlashInfer size with "
                  "--attention flashinfer, else none)");
  cmd->add_option("--moe-chunk", a->moe_chunk, "VLLM_FUSED_MOE_CHUNK_SIZE: tokens per fused-MoE chunk")
      ->capture_default_str();
  cmd->add_flag("--moe-inplace", a->moe_inplace, "Fused MoE writes into its input (vLLM with torch < 2.9)");
  cmd->add_option("--mla-decode-out", a->mla_decode_out,
                  "MLA decode output: transient, per-layer (vLLM #37442), shared (#37799)")
      ->capture_default_str();
  cmd->add_option("--decode-out-rows", a->decode_out_rows, "Rows of the MLA _decode_out buffer (max_num_seqs)")
      ->capture_default_str();
  cmd->add_flag("--eager", a->eager, "Eager liveness: each layer's input lives until the layer returns");
  cmd->add_flag("--json", a->json, "Print one JSON object instead of the text report");
  cmd->callback([a] { while_doing(fmt::format("computing the memory facts of model {}", a->model), [&] { run_model(*a); }); });
}

}  // namespace headroom::cli
