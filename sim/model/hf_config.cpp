#include "sim/model/hf_config.hpp"

#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/text_file.hpp"
#include "sim/model/json_text.hpp"
#include "sim/model/model_limits.hpp"

namespace headroom::model {

namespace {

using nlohmann::json;

// What a JSON value is, for "expected ..., got <this>" messages.
std::string describe(const json& v) {
  if (v.is_number_float()) return fmt::format("number {}", v.dump());
  if (v.is_number()) return v.dump();
  return v.type_name();
}

class Reader {
 public:
  // `prefix` names the enclosing object in messages, e.g. "quantization_config.".
  Reader(const json& j, const std::string& source, std::string prefix = "")
      : j_(j), source_(source), prefix_(std::move(prefix)) {}

  [[noreturn]] void fail(std::string_view key, std::string_view what) const {
    throw InputError(fmt::format("{}: key '{}{}': {}", source_, prefix_, key, what));
  }
  [[noreturn]] void missing(std::string_view key) const {
    throw InputError(fmt::format("{}: key '{}{}' is missing", source_, prefix_, key));
  }
  [[noreturn]] void missing(std::string_view key, std::string_view model_type) const {
    throw InputError(
        fmt::format("{}: key '{}{}' is missing (model_type '{}' needs it)", source_, prefix_, key, model_type));
  }

  // The value of `key`, or nullptr when it is absent or null (HF writes null for "not used").
  const json* find(std::string_view key) const {
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return nullptr;
    return &*it;
  }

  std::int64_t integer(std::string_view key, const json& v, std::int64_t min, std::int64_t max) const {
    if (!v.is_number_integer()) fail(key, "expected an integer, got " + describe(v));
    std::int64_t n = v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)
                         ? INT64_MAX
                         : v.get<std::int64_t>();
    if (n < min) fail(key, fmt::format("expected {} integer, got {}", min > 0 ? "a positive" : "a non-negative", n));
    if (n > max) fail(key, fmt::format("{} is above the limit of {} (docs/limits.md)", n, max));
    return n;
  }

  // Every dimension has its limit (model_limits.hpp), all of them within int.
  int positive(std::string_view key, std::string_view model_type, std::int64_t max) const {
    const json* v = find(key);
    if (!v) missing(key, model_type);
    return static_cast<int>(integer(key, *v, 1, max));
  }
  std::int64_t positive64(std::string_view key, std::string_view model_type, std::int64_t max) const {
    const json* v = find(key);
    if (!v) missing(key, model_type);
    return integer(key, *v, 1, max);
  }
  std::optional<int> optional_positive(std::string_view key, std::int64_t max) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    return static_cast<int>(integer(key, *v, 1, max));
  }
  int non_negative(std::string_view key, int if_absent, std::int64_t max) const {
    const json* v = find(key);
    if (!v) return if_absent;
    return static_cast<int>(integer(key, *v, 0, max));
  }
  bool boolean(std::string_view key, bool if_absent) const {
    const json* v = find(key);
    if (!v) return if_absent;
    if (!v->is_boolean()) fail(key, "expected true or false, got " + describe(*v));
    return v->get<bool>();
  }
  std::optional<std::string> string(std::string_view key) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) fail(key, "expected a string, got " + describe(*v));
    return v->get<std::string>();
  }
  std::vector<int> integer_list(std::string_view key, std::int64_t max) const {
    const json* v = find(key);
    if (!v) return {};
    if (!v->is_array()) fail(key, "expected a list of integers, got " + describe(*v));
    if (static_cast<std::int64_t>(v->size()) > max + 1)
      fail(key, fmt::format("{} entries are above the limit of {} (docs/limits.md)", v->size(), max + 1));
    std::vector<int> out;
    for (const auto& item : *v) out.push_back(static_cast<int>(integer(key, item, 0, max)));
    return out;
  }

  const std::string& source() const { return source_; }

 private:
  const json& j_;
  const std::string& source_;
  std::string prefix_;
};

// `architectures` class names for configs that lack model_type.
std::optional<Architecture> architecture_from_class(std::string_view cls) {
  if (cls == "LlamaForCausalLM") return Architecture::llama;
  if (cls == "Qwen2ForCausalLM") return Architecture::qwen2;
  if (cls == "Qwen3ForCausalLM") return Architecture::qwen3;
  if (cls == "Qwen3MoeForCausalLM") return Architecture::qwen3_moe;
  if (cls == "MixtralForCausalLM") return Architecture::mixtral;
  if (cls == "DeepseekV3ForCausalLM") return Architecture::deepseek_v3;
  return std::nullopt;
}

Architecture read_architecture(const json& j, const Reader& r) {
  if (auto model_type = r.string("model_type")) {
    const auto& names = supported_architectures();
    for (size_t i = 0; i < names.size(); ++i)
      if (*model_type == names[i]) return static_cast<Architecture>(i);
    throw InputError(fmt::format("{}: model_type '{}' is not supported (supported: {})", r.source(), *model_type,
                                 fmt::join(names, ", ")));
  }
  auto it = j.find("architectures");
  if (it != j.end() && it->is_array() && !it->empty() && (*it)[0].is_string()) {
    std::string cls = (*it)[0].get<std::string>();
    if (auto a = architecture_from_class(cls)) return *a;
    throw InputError(fmt::format(
        "{}: architectures '{}' is not supported (supported: LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, "
        "Qwen3MoeForCausalLM, MixtralForCausalLM, DeepseekV3ForCausalLM)",
        r.source(), cls));
  }
  throw InputError(fmt::format("{}: key 'model_type' is missing (supported: {})", r.source(),
                               fmt::join(supported_architectures(), ", ")));
}

// ModelConfig::dtype is what vLLM serves with --dtype auto: the config's torch_dtype (newer
// transformers write "dtype"); float32 or no dtype is served in the platform's first supported
// dtype, bf16 on current GPUs (vllm/config/model.py _resolve_auto_dtype: "Downcast for float32 models").
DType read_dtype(const Reader& r) {
  std::string key = r.find("torch_dtype") ? "torch_dtype" : "dtype";
  auto text = r.string(key);
  if (!text || *text == "float32" || *text == "bfloat16") return DType::bf16;
  if (*text == "float16") return DType::fp16;
  r.fail(key, fmt::format("expected bfloat16, float16 or float32, got '{}'", *text));
}

WeightQuantization read_quantization(const json& j, const Reader& r) {
  auto it = j.find("quantization_config");
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_object()) r.fail("quantization_config", "expected an object, got " + describe(*it));
  Reader q(*it, r.source(), "quantization_config.");
  auto method = q.string("quant_method");
  if (!method) q.missing("quant_method");
  if (*method != "fp8")
    q.fail("quant_method", fmt::format("'{}' is not supported (supported: fp8 with weight_block_size)", *method));
  const json* block = q.find("weight_block_size");
  if (!block)
    throw InputError(fmt::format(
        "{}: key 'quantization_config.weight_block_size' is missing (only block-wise fp8 is modelled)", r.source()));
  if (!block->is_array() || block->size() != 2)
    q.fail("weight_block_size", "expected a list of two integers, got " + describe(*block));
  WeightQuantization w;
  w.method = WeightQuantization::Method::fp8_block;
  w.block_n = static_cast<int>(q.integer("weight_block_size", (*block)[0], 1, limits::kMaxWeightBlock));
  w.block_k = static_cast<int>(q.integer("weight_block_size", (*block)[1], 1, limits::kMaxWeightBlock));
  return w;
}

void reject_sliding_window(const Reader& r, Architecture a) {
  // Sliding-window attention changes KV sizing; these models ship without it.
  if (a == Architecture::mixtral) {
    if (r.find("sliding_window")) r.fail("sliding_window", "sliding-window attention is not modelled (expected null)");
  } else if (r.boolean("use_sliding_window", false)) {
    r.fail("use_sliding_window", "sliding-window attention is not modelled (expected false)");
  }
}

}  // namespace

ModelConfig parse_hf_config(const json& j, const std::string& source, const std::string& name) {
  if (!j.is_object())
    throw InputError(fmt::format("{}: expected a JSON object at the top level, got {}", source, describe(j)));
  Reader r(j, source);
  ModelConfig c;
  c.name = name;
  c.architecture = read_architecture(j, r);
  std::string_view mt = architecture_name(c.architecture);

  c.layers = r.positive("num_hidden_layers", mt, limits::kMaxLayers);
  c.hidden = r.positive("hidden_size", mt, limits::kMaxHiddenSize);
  c.intermediate = r.positive("intermediate_size", mt, limits::kMaxIntermediateSize);
  c.heads = r.positive("num_attention_heads", mt, limits::kMaxHeads);
  // LlamaConfig and DeepseekV3Config fall back to num_attention_heads (plain multi-head attention).
  bool kv_heads_optional = c.architecture == Architecture::llama || c.architecture == Architecture::deepseek_v3;
  c.kv_heads = kv_heads_optional ? r.optional_positive("num_key_value_heads", limits::kMaxHeads).value_or(c.heads)
                                 : r.positive("num_key_value_heads", mt, limits::kMaxHeads);
  // Grouped-query attention shares each KV head among heads / kv_heads query heads (transformers'
  // repeat_kv), so the count must divide; MLA (deepseek_v3) has no separate KV heads to group.
  if (c.architecture != Architecture::deepseek_v3 && (c.kv_heads > c.heads || c.heads % c.kv_heads != 0))
    r.fail("num_key_value_heads", fmt::format("expected a divisor of num_attention_heads ({}), got {}", c.heads, c.kv_heads));
  c.vocab = r.positive("vocab_size", mt, limits::kMaxVocab);
  c.max_position = r.positive64("max_position_embeddings", mt, limits::kMaxPositionEmbeddings);
  c.tie_word_embeddings = r.boolean("tie_word_embeddings", false);
  c.dtype = read_dtype(r);
  c.quantization = read_quantization(j, r);
  reject_sliding_window(r, c.architecture);

  switch (c.architecture) {
    case Architecture::qwen3:
    case Architecture::qwen3_moe:
      // Qwen3 gives head_dim explicitly (128 while hidden / heads is 64 for Qwen3-30B-A3B).
      c.head_dim = r.positive("head_dim", mt, limits::kMaxHeadDim);
      break;
    case Architecture::deepseek_v3:
      break;  // set from the MLA dimensions below
    default:
      if (auto d = r.optional_positive("head_dim", limits::kMaxHeadDim)) {
        c.head_dim = *d;
      } else {
        if (c.hidden % c.heads != 0)
          throw InputError(fmt::format(
              "{}: hidden_size ({}) is not divisible by num_attention_heads ({}); give head_dim", source, c.hidden,
              c.heads));
        c.head_dim = c.hidden / c.heads;
      }
  }

  switch (c.architecture) {
    case Architecture::llama:
      // LlamaAttention: attention_bias applies to q/k/v and o_proj; mlp_bias to the MLP.
      c.qkv_bias = c.o_proj_bias = r.boolean("attention_bias", false);
      if (r.boolean("mlp_bias", false)) r.fail("mlp_bias", "MLP biases are not modelled (expected false)");
      break;
    case Architecture::qwen2:
      c.qkv_bias = true;  // Qwen2Attention: q/k/v with bias, o_proj without
      break;
    case Architecture::qwen3:
      c.qkv_bias = c.o_proj_bias = r.boolean("attention_bias", false);
      break;
    case Architecture::qwen3_moe:
      c.qkv_bias = c.o_proj_bias = r.boolean("attention_bias", false);
      c.experts = r.positive("num_experts", mt, limits::kMaxExperts);
      c.experts_per_token = r.positive("num_experts_per_tok", mt, limits::kMaxExperts);
      c.moe_intermediate = r.positive("moe_intermediate_size", mt, limits::kMaxIntermediateSize);
      c.moe_layer_step = r.optional_positive("decoder_sparse_step", limits::kMaxLayers).value_or(1);
      c.dense_layers = r.integer_list("mlp_only_layers", limits::kMaxLayers - 1);
      break;
    case Architecture::mixtral:
      c.experts = r.positive("num_local_experts", mt, limits::kMaxExperts);
      c.experts_per_token = r.positive("num_experts_per_tok", mt, limits::kMaxExperts);
      c.moe_intermediate = c.intermediate;  // every expert is an intermediate_size-wide MLP
      break;
    case Architecture::deepseek_v3:
      c.experts = r.positive("n_routed_experts", mt, limits::kMaxExperts);
      c.experts_per_token = r.positive("num_experts_per_tok", mt, limits::kMaxExperts);
      c.moe_intermediate = r.positive("moe_intermediate_size", mt, limits::kMaxIntermediateSize);
      c.shared_experts = r.non_negative("n_shared_experts", 0, limits::kMaxExperts);
      c.first_k_dense = r.non_negative("first_k_dense_replace", 0, limits::kMaxLayers);
      c.moe_layer_step = r.optional_positive("moe_layer_freq", limits::kMaxLayers).value_or(1);
      c.q_lora_rank = r.non_negative("q_lora_rank", 0, limits::kMaxLoraRank);  // null: queries projected directly
      c.kv_lora_rank = r.positive("kv_lora_rank", mt, limits::kMaxLoraRank);
      c.qk_nope_head_dim = r.positive("qk_nope_head_dim", mt, limits::kMaxHeadDim);
      c.qk_rope_head_dim = r.positive("qk_rope_head_dim", mt, limits::kMaxHeadDim);
      c.v_head_dim = r.positive("v_head_dim", mt, limits::kMaxHeadDim);
      c.head_dim = c.qk_nope_head_dim + c.qk_rope_head_dim;
      c.mtp_layers = r.non_negative("num_nextn_predict_layers", 0, limits::kMaxMtpLayers);
      break;
  }
  // The router picks top-k of the experts there are (transformers' torch.topk fails otherwise).
  if (c.is_moe() && c.experts_per_token > c.experts)
    r.fail("num_experts_per_tok",
           fmt::format("expected at most the number of routed experts ({}), got {}", c.experts, c.experts_per_token));
  return c;
}

ModelConfig load_hf_config(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  fs::path file = fs::is_directory(path) ? path / "config.json" : path;
  refuse_special_file(file, "model config");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open the model config", file.string()));
  const std::string text = read_text_file(file, "model config");
  const json j = parse_json_text(text, file.string());
  fs::path folder = file.parent_path();
  std::string name = folder.filename().empty() ? file.stem().string() : folder.filename().string();
  return parse_hf_config(j, file.string(), name);
}

}  // namespace headroom::model
