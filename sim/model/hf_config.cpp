#include "sim/model/hf_config.hpp"

#include <algorithm>
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

  bool present(std::string_view key) const { return j_.find(key) != j_.end(); }
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

  // A number (integer or not) in (0, max]; `if_absent` when absent or null.
  double number(std::string_view key, double if_absent, double max) const {
    const json* v = find(key);
    if (!v) return if_absent;
    if (!v->is_number()) fail(key, "expected a number, got " + describe(*v));
    const double x = v->get<double>();
    if (!(x > 0)) fail(key, fmt::format("expected a positive number, got {}", v->dump()));
    if (x > max) fail(key, fmt::format("{} is above the limit of {} (docs/limits.md)", v->dump(), max));
    return x;
  }

  const std::string& source() const { return source_; }
  const std::string& prefix() const { return prefix_; }

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
  if (cls == "MistralForCausalLM") return Architecture::mistral;
  if (cls == "DeepseekV2ForCausalLM") return Architecture::deepseek_v2;
  if (cls == "GptOssForCausalLM") return Architecture::gpt_oss;
  if (cls == "Gemma2ForCausalLM") return Architecture::gemma2;
  if (cls == "Gemma3ForCausalLM") return Architecture::gemma3_text;
  if (cls == "Llama4ForConditionalGeneration" || cls == "Llama4ForCausalLM") return Architecture::llama4;
  return std::nullopt;
}

Architecture read_architecture(const json& j, const Reader& r) {
  if (auto model_type = r.string("model_type")) {
    const auto& names = supported_architectures();
    for (size_t i = 0; i < names.size(); ++i)
      if (*model_type == names[i]) return static_cast<Architecture>(i);
    // Llama4ForCausalLM's text-only config (Llama4TextConfig) is the body of the multimodal one's text_config.
    if (*model_type == "llama4_text") return Architecture::llama4;
    // Gemma 3's 4B-27B checkpoints are Gemma3ForConditionalGeneration: a vision tower and the text
    // model under text_config; the vision weights are not modelled.
    if (*model_type == "gemma3")
      throw InputError(fmt::format("{}: model_type 'gemma3' is Gemma 3's multimodal model, whose vision tower is not "
                                   "modelled; give a text-only config (model_type gemma3_text, Gemma3ForCausalLM) "
                                   "(supported: {})",
                                   r.source(), fmt::join(names, ", ")));
    throw InputError(fmt::format("{}: model_type '{}' is not supported (supported: {})", r.source(), *model_type,
                                 fmt::join(names, ", ")));
  }
  auto it = j.find("architectures");
  if (it != j.end() && it->is_array() && !it->empty() && (*it)[0].is_string()) {
    std::string cls = (*it)[0].get<std::string>();
    if (auto a = architecture_from_class(cls)) return *a;
    throw InputError(fmt::format(
        "{}: architectures '{}' is not supported (supported: LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, "
        "Qwen3MoeForCausalLM, MixtralForCausalLM, DeepseekV3ForCausalLM, MistralForCausalLM, DeepseekV2ForCausalLM, "
        "GptOssForCausalLM, Gemma2ForCausalLM, Gemma3ForCausalLM, Llama4ForConditionalGeneration, Llama4ForCausalLM)",
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

// The quant_method values read below (vLLM's quantization configs of the same names).
constexpr std::string_view kQuantMethods = "fp8, compressed-tensors, gptq, awq, mxfp4, modelopt";

// A format's list of modules it leaves unquantized (modules_to_not_convert, ignore,
// exclude_modules, ignored_layers). Only modules every format keeps unquantized here anyway are
// modelled: lm_head, the embeddings, MoE routers (and, under mxfp4, which quantizes experts only,
// attention); anything else would leave weights in the model dtype that headroom quantizes.
void check_unquantized_modules(const Reader& q, std::string_view key, bool attention_too) {
  const json* list = q.find(key);
  if (!list) return;
  if (!list->is_array()) q.fail(key, "expected a list of module names, got " + describe(*list));
  for (const auto& item : *list) {
    if (!item.is_string()) q.fail(key, "expected a list of module names, got an entry " + describe(item));
    const std::string name = item.get<std::string>();
    const bool kept = name.find("lm_head") != std::string::npos || name.find("embed") != std::string::npos ||
                      name.find("router") != std::string::npos || name == "gate" ||
                      name.ends_with(".gate") || name.ends_with("mlp.gate$") || name.ends_with("gate$") ||
                      (attention_too && name.find("self_attn") != std::string::npos);
    if (!kept)
      q.fail(key, fmt::format("'{}' leaves a quantizable layer unquantized, which is not modelled (modelled: lm_head, "
                              "embeddings and MoE routers{})",
                              name, attention_too ? ", attention" : ""));
  }
}

// An integer key a format needs: present, an integer, one of `allowed`.
int required_choice(const Reader& q, std::string_view key, std::initializer_list<int> allowed, std::string_view what) {
  const json* v = q.find(key);
  if (!v) q.missing(key);
  const auto n = q.integer(key, *v, INT32_MIN, INT32_MAX);
  for (int a : allowed)
    if (n == a) return a;
  q.fail(key, fmt::format("{} {} is not modelled (expected {})", what, n, fmt::join(allowed, " or ")));
}

// group_size of GPTQ/AWQ: input columns per scale; -1 (one group per row) reads as 0.
int read_group_size(const Reader& q, std::string_view key) {
  const json* v = q.find(key);
  if (!v) q.missing(key);
  const auto n = q.integer(key, *v, -1, limits::kMaxWeightBlock);
  if (n == 0) q.fail(key, "expected a positive group size or -1 (one group per row), got 0");
  return n < 0 ? 0 : static_cast<int>(n);
}

// quant_method fp8 (vllm quantization/fp8.py Fp8Config): block-wise with weight_block_size, else
// one scale per tensor; activation_scheme static adds an input scale.
WeightQuantization read_fp8(const Reader& q) {
  check_unquantized_modules(q, "ignored_layers", false);
  WeightQuantization w;
  const std::string scheme = q.string("activation_scheme").value_or("dynamic");
  if (scheme != "dynamic" && scheme != "static")
    q.fail("activation_scheme", fmt::format("expected dynamic or static, got '{}'", scheme));
  if (const json* block = q.find("weight_block_size")) {
    if (!block->is_array() || block->size() != 2)
      q.fail("weight_block_size", "expected a list of two integers, got " + describe(*block));
    w.method = WeightQuantization::Method::fp8_block;
    w.block_n = static_cast<int>(q.integer("weight_block_size", (*block)[0], 1, limits::kMaxWeightBlock));
    w.block_k = static_cast<int>(q.integer("weight_block_size", (*block)[1], 1, limits::kMaxWeightBlock));
    return w;
  }
  w.method = WeightQuantization::Method::fp8_tensor;
  w.static_input_scale = scheme == "static";
  return w;
}

// quant_method compressed-tensors (llm-compressor checkpoints; vllm quantization/compressed_tensors):
// one config group of FP8 weights per tensor or per channel (W8A8 or weight-only), or NVFP4.
WeightQuantization read_compressed_tensors(const Reader& q, const std::string& source) {
  check_unquantized_modules(q, "ignore", false);
  const json* groups = q.find("config_groups");
  if (!groups) q.missing("config_groups");
  if (!groups->is_object() || groups->size() != 1)
    q.fail("config_groups", "expected one quantization group (several are not modelled), got " +
                                (groups->is_object() ? fmt::format("{}", groups->size()) : describe(*groups)));
  const std::string group_key = groups->begin().key();
  const json& group = groups->begin().value();
  if (!group.is_object()) q.fail("config_groups." + group_key, "expected an object, got " + describe(group));
  Reader g(group, source, "quantization_config.config_groups." + group_key + ".");
  const json* weights = g.find("weights");
  if (!weights) g.missing("weights");
  if (!weights->is_object()) g.fail("weights", "expected an object, got " + describe(*weights));
  Reader wr(*weights, source, "quantization_config.config_groups." + group_key + ".weights.");
  const int bits = required_choice(wr, "num_bits", {4, 8}, "num_bits");
  const std::string type = wr.string("type").value_or("int");
  const std::string strategy = wr.string("strategy").value_or("tensor");
  WeightQuantization w;
  if (bits == 8 && type == "float" && (strategy == "tensor" || strategy == "channel")) {
    w.method = strategy == "tensor" ? WeightQuantization::Method::fp8_tensor : WeightQuantization::Method::fp8_channel;
    if (const json* input = g.find("input_activations")) {
      if (!input->is_object()) g.fail("input_activations", "expected an object or null, got " + describe(*input));
      Reader ir(*input, source, "quantization_config.config_groups." + group_key + ".input_activations.");
      w.static_input_scale = !ir.boolean("dynamic", false);
    }
    return w;
  }
  if (bits == 4 && type == "float" && wr.optional_positive("group_size", limits::kMaxWeightBlock) == 16) {
    w.method = WeightQuantization::Method::nvfp4;  // nvfp4-pack-quantized: the modelopt layout's bytes
    w.group_size = 16;
    return w;
  }
  if (type == "int" && (strategy == "group" || strategy == "channel")) {
    // W4A16/W8A16 (vllm compressed_tensors.py _is_wNa16_group_channel, CompressedTensorsWNA16): the
    // pack-quantized format, symmetric, weights only.
    const std::optional<std::string> format = g.find("format") ? g.string("format") : q.string("format");
    if (!format) q.missing("format");
    if (*format != "pack-quantized")
      q.fail("format", fmt::format("'{}' with integer weights is not modelled (modelled: pack-quantized, W4A16/W8A16)",
                                   *format));
    if (g.find("input_activations"))
      g.fail("input_activations", "integer activations (W8A8 INT8) are not modelled; expected null (weights only)");
    if (!wr.boolean("symmetric", true))
      wr.fail("symmetric", "false (zero points) is not modelled; expected true");
    w.method = WeightQuantization::Method::wna16;
    w.bits = bits;
    if (strategy == "group") {
      const json* gs = wr.find("group_size");
      if (!gs) wr.missing("group_size");
      w.group_size = static_cast<int>(wr.integer("group_size", *gs, 1, limits::kMaxWeightBlock));
    }
    if (wr.find("actorder")) {
      const std::string a = *wr.string("actorder");
      if (a != "group" && a != "weight" && a != "static")
        wr.fail("actorder", fmt::format("expected group, weight, static or null, got '{}'", a));
      w.act_order = a == "group";  // vLLM has_g_idx: actorder == ActivationOrdering.GROUP
    }
    return w;
  }
  wr.fail("type", fmt::format("num_bits {} type '{}' strategy '{}' is not modelled (modelled: num_bits 8 type float "
                              "strategy tensor or channel (FP8); num_bits 4 type float group_size 16 (NVFP4); "
                              "num_bits 4 or 8 type int strategy group or channel (pack-quantized W4A16/W8A16))",
                              bits, type, strategy));
}

WeightQuantization read_quantization(const json& j, const Reader& r) {
  auto it = j.find("quantization_config");
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_object()) r.fail("quantization_config", "expected an object, got " + describe(*it));
  Reader q(*it, r.source(), "quantization_config.");
  auto method = q.string("quant_method");
  if (!method) q.missing("quant_method");
  WeightQuantization w;
  if (*method == "fp8") return read_fp8(q);
  if (*method == "compressed-tensors") return read_compressed_tensors(q, r.source());
  if (*method == "gptq") {
    // vllm quantization/gptq.py, gptq_marlin.py: 4- and 8-bit (Marlin's), any group size.
    check_unquantized_modules(q, "modules_to_not_convert", false);
    w.method = WeightQuantization::Method::gptq;
    w.bits = required_choice(q, "bits", {4, 8}, "bits");
    w.group_size = read_group_size(q, "group_size");
    w.act_order = q.boolean("desc_act", false);
    return w;
  }
  if (*method == "awq") {
    // vllm quantization/awq.py, awq_marlin.py: 4-bit with zero points, AutoAWQ's GEMM layout.
    check_unquantized_modules(q, "modules_to_not_convert", false);
    w.method = WeightQuantization::Method::awq;
    w.bits = required_choice(q, q.find("bits") || !q.find("w_bit") ? "bits" : "w_bit", {4}, "bits");
    w.group_size = read_group_size(q, q.find("group_size") || !q.find("q_group_size") ? "group_size" : "q_group_size");
    if (!q.boolean("zero_point", true)) q.fail("zero_point", "AWQ without zero points is not modelled (expected true)");
    if (auto version = q.string("version"); version && *version != "gemm")
      q.fail("version", fmt::format("'{}' is not modelled (expected gemm, the layout vLLM loads)", *version));
    return w;
  }
  if (*method == "mxfp4") {
    // vllm quantization/mxfp4.py: MoE experts only; linear layers stay in the model dtype.
    check_unquantized_modules(q, "modules_to_not_convert", true);
    w.method = WeightQuantization::Method::mxfp4;
    w.group_size = 32;
    return w;
  }
  if (*method == "modelopt") {
    // vllm quantization/modelopt.py: quant_algo FP8 (per tensor, static input scales) or NVFP4;
    // hf_quant_config.json nests the keys under "quantization".
    const json* nested = q.find("quantization");
    if (nested && !nested->is_object()) q.fail("quantization", "expected an object, got " + describe(*nested));
    Reader m = nested ? Reader(*nested, r.source(), "quantization_config.quantization.") : q;
    check_unquantized_modules(m, "exclude_modules", false);
    auto algo = m.string("quant_algo");
    if (!algo) m.missing("quant_algo");
    if (*algo == "FP8") {
      w.method = WeightQuantization::Method::fp8_tensor;
      w.static_input_scale = true;
      return w;
    }
    if (*algo == "NVFP4") {
      w.method = WeightQuantization::Method::nvfp4;
      w.group_size = m.find("group_size") ? required_choice(m, "group_size", {16}, "group_size") : 16;
      return w;
    }
    m.fail("quant_algo", fmt::format("'{}' is not supported (supported: FP8, NVFP4)", *algo));
  }
  q.fail("quant_method", fmt::format("'{}' is not supported (supported: {})", *method, kQuantMethods));
}

bool reads_sliding_layers(Architecture a) {
  return a == Architecture::gpt_oss || a == Architecture::gemma2 || a == Architecture::gemma3_text;
}

// rope_scaling: its type under "rope_type" (or "type" in older configs), its factor and, for yarn,
// original_max_position_embeddings: what vLLM's get_rope reads to size its table
// (vllm/model_executor/layers/rotary_embedding/__init__.py; rotary_cache.hpp). Other types (longrope,
// mrope, ntk, ...) belong to architectures not modelled here.
void read_rope_scaling(const Reader& r, ModelConfig& c) {
  const json* s = r.find("rope_scaling");
  if (!s) return;
  if (!s->is_object()) r.fail("rope_scaling", "expected an object, got " + describe(*s));
  const Reader q(*s, r.source(), r.prefix() + "rope_scaling.");
  const std::string type_key = q.find("rope_type") ? "rope_type" : "type";
  const std::string type = q.string(type_key).value_or("default");
  if (type == "default") return;
  constexpr RopeScaling kTypes[] = {RopeScaling::linear, RopeScaling::dynamic, RopeScaling::llama3, RopeScaling::yarn};
  const auto* found = std::find_if(std::begin(kTypes), std::end(kTypes),
                                   [&](RopeScaling t) { return rope_scaling_name(t) == type; });
  if (found == std::end(kTypes))
    q.fail(type_key, fmt::format("'{}' is not modelled (supported: default, linear, dynamic, llama3, yarn)", type));
  c.rope_scaling = *found;
  if (!q.find("factor")) q.missing("factor");
  c.rope_factor = q.number("factor", 1, limits::kMaxRopeFactor);
  if (c.rope_scaling == RopeScaling::yarn)
    c.rope_original_max_position =
        q.positive64("original_max_position_embeddings", "yarn", limits::kMaxPositionEmbeddings);
}

void reject_sliding_window(const Reader& r, Architecture a) {
  // Sliding-window attention changes KV sizing; these models ship without it (gpt-oss's and
  // Gemma's windowed layers are read in parse_hf_config).
  if (a == Architecture::mixtral || a == Architecture::mistral) {
    if (r.find("sliding_window")) r.fail("sliding_window", "sliding-window attention is not modelled (expected null)");
  } else if (!reads_sliding_layers(a) && r.boolean("use_sliding_window", false)) {
    r.fail("use_sliding_window", "sliding-window attention is not modelled (expected false)");
  }
}

// layer_types: "sliding_attention" or "full_attention" per decoder layer (gpt-oss; Gemma 2/3
// configs written by newer transformers); nullopt when absent and `required` is false.
std::optional<std::vector<int>> read_sliding_layers(const Reader& r, int layers, bool required, std::string_view mt) {
  const json* types = r.find("layer_types");
  if (!types && !required) return std::nullopt;
  if (!types) r.missing("layer_types", mt);
  if (!types->is_array() || static_cast<std::int64_t>(types->size()) != layers)
    r.fail("layer_types", fmt::format("expected a list of {} entries (num_hidden_layers), got {}", layers,
                                      types->is_array() ? fmt::format("{}", types->size()) : describe(*types)));
  std::vector<int> sliding;
  for (int l = 0; l < layers; ++l) {
    const json& t = (*types)[static_cast<std::size_t>(l)];
    if (t == "sliding_attention") sliding.push_back(l);
    else if (t != "full_attention")
      r.fail("layer_types", fmt::format("entry {}: expected sliding_attention or full_attention, got {}", l,
                                        t.is_string() ? "'" + t.get<std::string>() + "'" : describe(t)));
  }
  return sliding;
}

}  // namespace

// Llama4TextConfig as vllm/model_executor/models/llama4.py builds it: no attention biases; q/k
// norms without weights (use_qk_norm) and the NoPE layers' temperature tuning change no tensor
// and no KV byte; every interleave_moe_layer_step-th layer a Llama4MoE (a router without bias over
// num_local_experts experts plus one shared expert, all intermediate_size wide), the others a
// dense MLP of intermediate_size_mlp; the RoPE layers (no_rope_layers[i] == 1) use chunked local
// attention over attention_chunk_size tokens (ChunkedLocalAttention), the NoPE ones full attention.
void read_llama4(const Reader& r, std::string_view mt, ModelConfig& c) {
  if (r.boolean("attention_bias", false)) r.fail("attention_bias", "Llama 4 attention has no biases (expected false)");
  c.experts = r.positive("num_local_experts", mt, limits::kMaxExperts);
  c.experts_per_token = r.positive("num_experts_per_tok", mt, limits::kMaxExperts);
  c.moe_intermediate = c.intermediate;
  c.intermediate = r.positive("intermediate_size_mlp", mt, limits::kMaxIntermediateSize);
  c.shared_experts = 1;
  // Llama4TextConfig defaults: interleave_moe_layer_step 1, attention_chunk_size 8192,
  // no_rope_layer_interval 4 (no_rope_layers empty: layer i is NoPE when (i + 1) % 4 == 0).
  c.moe_layer_step = r.optional_positive("interleave_moe_layer_step", limits::kMaxLayers).value_or(1);
  // attention_chunk_size null: every layer attends in full (vLLM then builds no ChunkedLocalAttention).
  if (!r.present("attention_chunk_size"))
    c.attention_chunk = 8192;
  else if (r.find("attention_chunk_size"))
    c.attention_chunk = static_cast<int>(r.positive64("attention_chunk_size", mt, limits::kMaxPositionEmbeddings));
  std::vector<int> rope(static_cast<std::size_t>(c.layers), 1);
  const json* listed = r.find("no_rope_layers");
  if (listed && !(listed->is_array() && listed->empty())) {
    if (!listed->is_array() || static_cast<int>(listed->size()) != c.layers)
      r.fail("no_rope_layers", fmt::format("expected a list of {} entries (num_hidden_layers) of 0 or 1, got {}",
                                           c.layers,
                                           listed->is_array() ? fmt::format("{} entries", listed->size())
                                                              : describe(*listed)));
    for (int l = 0; l < c.layers; ++l)
      rope[static_cast<std::size_t>(l)] =
          static_cast<int>(r.integer("no_rope_layers", (*listed)[static_cast<std::size_t>(l)], 0, 1));
  } else {
    const int interval = r.optional_positive("no_rope_layer_interval", limits::kMaxLayers).value_or(4);
    for (int l = 0; l < c.layers; ++l) rope[static_cast<std::size_t>(l)] = (l + 1) % interval != 0;
  }
  if (c.attention_chunk > 0)
    for (int l = 0; l < c.layers; ++l)
      if (rope[static_cast<std::size_t>(l)]) c.chunked_layers.push_back(l);
}

// vision_config as vllm/model_executor/models/mllama4.py Llama4VisionModel and the multimodal
// projector read it; the pixel-shuffle adapter's input is intermediate_size whatever the ratio.
VisionTower read_llama4_vision(const Reader& top, std::string_view mt) {
  const json* v = top.find("vision_config");
  if (!v) top.missing("vision_config", mt);
  if (!v->is_object()) top.fail("vision_config", "expected an object, got " + describe(*v));
  const Reader r(*v, top.source(), "vision_config.");
  VisionTower t;
  t.layers = r.positive("num_hidden_layers", mt, limits::kMaxLayers);
  t.hidden = r.positive("hidden_size", mt, limits::kMaxHiddenSize);
  t.intermediate = r.positive("intermediate_size", mt, limits::kMaxIntermediateSize);
  t.heads = r.positive("num_attention_heads", mt, limits::kMaxHeads);
  if (t.hidden % t.heads != 0)
    r.fail("num_attention_heads", fmt::format("expected a divisor of hidden_size ({}), got {}", t.hidden, t.heads));
  t.image_size = r.positive("image_size", mt, limits::kMaxHiddenSize);
  t.patch_size = r.positive("patch_size", mt, limits::kMaxHiddenSize);
  if (t.patch_size > t.image_size)
    r.fail("patch_size", fmt::format("expected at most image_size ({}), got {}", t.image_size, t.patch_size));
  t.channels = r.optional_positive("num_channels", limits::kMaxHeads).value_or(3);
  t.projector_input = r.positive("projector_input_dim", mt, limits::kMaxIntermediateSize);
  t.projector_output = r.positive("projector_output_dim", mt, limits::kMaxIntermediateSize);
  t.output = r.positive("vision_output_dim", mt, limits::kMaxIntermediateSize);
  t.projector_bias = r.boolean("multi_modal_projector_bias", false);
  return t;
}

ModelConfig parse_hf_config(const json& j, const std::string& source, const std::string& name) {
  if (!j.is_object())
    throw InputError(fmt::format("{}: expected a JSON object at the top level, got {}", source, describe(j)));
  const Reader top(j, source);
  ModelConfig c;
  c.name = name;
  c.architecture = read_architecture(j, top);
  std::string_view mt = architecture_name(c.architecture);
  // Llama4ForConditionalGeneration keeps the decoder under text_config and the vision tower under
  // vision_config (transformers Llama4Config); a Llama4ForCausalLM config is the text body alone.
  const bool multimodal = c.architecture == Architecture::llama4 && top.string("model_type") != "llama4_text" &&
                          (top.find("text_config") || top.string("model_type") == "llama4");
  const json* body = &j;
  if (multimodal) {
    body = top.find("text_config");
    if (!body) top.missing("text_config", mt);
    if (!body->is_object()) top.fail("text_config", "expected an object, got " + describe(*body));
  }
  const Reader r(*body, source, multimodal ? "text_config." : "");

  c.layers = r.positive("num_hidden_layers", mt, limits::kMaxLayers);
  c.hidden = r.positive("hidden_size", mt, limits::kMaxHiddenSize);
  c.intermediate = r.positive("intermediate_size", mt, limits::kMaxIntermediateSize);
  c.heads = r.positive("num_attention_heads", mt, limits::kMaxHeads);
  // LlamaConfig and DeepseekV3Config fall back to num_attention_heads (plain multi-head attention).
  bool kv_heads_optional = c.architecture == Architecture::llama || c.is_deepseek();
  c.kv_heads = kv_heads_optional ? r.optional_positive("num_key_value_heads", limits::kMaxHeads).value_or(c.heads)
                                 : r.positive("num_key_value_heads", mt, limits::kMaxHeads);
  // Grouped-query attention shares each KV head among heads / kv_heads query heads (transformers'
  // repeat_kv), so the count must divide; MLA (deepseek_v3) has no separate KV heads to group.
  if (!c.is_deepseek() && (c.kv_heads > c.heads || c.heads % c.kv_heads != 0))
    r.fail("num_key_value_heads", fmt::format("expected a divisor of num_attention_heads ({}), got {}", c.heads, c.kv_heads));
  c.vocab = r.positive("vocab_size", mt, limits::kMaxVocab);
  c.max_position = r.positive64("max_position_embeddings", mt, limits::kMaxPositionEmbeddings);
  c.tie_word_embeddings = r.boolean("tie_word_embeddings", false);
  c.dtype = read_dtype(r);
  read_rope_scaling(r, c);
  c.quantization = read_quantization(j, top);
  reject_sliding_window(r, c.architecture);

  switch (c.architecture) {
    case Architecture::qwen3:
    case Architecture::qwen3_moe:
    case Architecture::gpt_oss:
    case Architecture::gemma2:
    case Architecture::gemma3_text:
    case Architecture::llama4:
      // Qwen3, gpt-oss, Gemma and Llama 4 give head_dim explicitly (128 while hidden / heads is 64 for
      // Qwen3-30B-A3B; gpt-oss 64 against 2880 / 64 = 45; Gemma-2-9B 256 against 3584 / 16).
      c.head_dim = r.positive("head_dim", mt, limits::kMaxHeadDim);
      break;
    case Architecture::deepseek_v2:
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
    case Architecture::mistral:
      break;  // MistralAttention / MistralMLP: no biases
    case Architecture::gpt_oss:
      // vllm model_executor/models/gpt_oss.py: q/k/v and o_proj with biases, a sink logit per
      // head, a router with a bias over num_local_experts experts, each intermediate_size wide.
      c.qkv_bias = c.o_proj_bias = r.boolean("attention_bias", true);
      c.experts = r.positive("num_local_experts", mt, limits::kMaxExperts);
      c.experts_per_token = r.positive(r.find("num_experts_per_tok") ? "num_experts_per_tok" : "experts_per_token",
                                       mt, limits::kMaxExperts);
      c.moe_intermediate = c.intermediate;
      c.attention_sinks = true;
      c.moe_bias = true;
      c.sliding_window = static_cast<int>(r.positive64("sliding_window", mt, limits::kMaxPositionEmbeddings));
      c.sliding_layers = *read_sliding_layers(r, c.layers, true, mt);
      break;
    case Architecture::gemma2:
    case Architecture::gemma3_text: {
      // vllm model_executor/models/gemma2.py, gemma3.py: q/k/v/o with attention_bias (false in the
      // published configs), a gated GeLU MLP, four RMSNorms per layer (Gemma 3 also q_norm and
      // k_norm), the embedding tied to the LM head unless the config says otherwise (Gemma2Config,
      // Gemma3TextConfig default tie_word_embeddings true). Soft-capping changes no tensor sizes.
      c.qkv_bias = c.o_proj_bias = r.boolean("attention_bias", false);
      c.tie_word_embeddings = r.boolean("tie_word_embeddings", true);
      c.sliding_window = static_cast<int>(r.positive64("sliding_window", mt, limits::kMaxPositionEmbeddings));
      if (auto listed = read_sliding_layers(r, c.layers, false, mt)) {
        c.sliding_layers = std::move(*listed);
      } else if (c.architecture == Architecture::gemma2) {
        // Gemma2Config: layer i is "sliding_attention" when (i + 1) % 2 (even layers).
        for (int l = 0; l < c.layers; l += 2) c.sliding_layers.push_back(l);
      } else {
        // Gemma3TextConfig: layer i slides unless (i + 1) % sliding_window_pattern == 0 (default 6).
        const int pattern = r.optional_positive("sliding_window_pattern", limits::kMaxLayers).value_or(6);
        for (int l = 0; l < c.layers; ++l)
          if ((l + 1) % pattern != 0) c.sliding_layers.push_back(l);
      }
      // gemma3.py Gemma3Attention: sliding layers rotate with rope_local_base_freq and no scaling
      // (Gemma3TextConfig defaults: 10,000 and rope_theta 1,000,000).
      if (c.architecture == Architecture::gemma3_text)
        c.local_rope = r.number("rope_local_base_freq", 10'000, 1e12) != r.number("rope_theta", 1'000'000, 1e12) ||
                       c.rope_scaling != RopeScaling::none;
      break;
    }
    case Architecture::llama4:
      read_llama4(r, mt, c);
      if (multimodal) c.vision = read_llama4_vision(top, mt);
      break;
    case Architecture::deepseek_v2:
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
  // Quantized Llama 4 checkpoints (Meta's FP8 is fbgemm_fp8; RedHatAI's compressed-tensors ones
  // leave the vision tower and more unquantized) are not modelled.
  if (c.architecture == Architecture::llama4 && c.quantization.method != WeightQuantization::Method::none)
    top.fail("quantization_config", fmt::format("a quantized Llama 4 checkpoint ({}) is not modelled; llama4 is "
                                                "modelled in bfloat16/float16 only",
                                                quantization_name(c.quantization.method)));
  // The router picks top-k of the experts there are (transformers' torch.topk fails otherwise).
  if (c.is_moe() && c.experts_per_token > c.experts)
    r.fail("num_experts_per_tok",
           fmt::format("expected at most the number of routed experts ({}), got {}", c.experts, c.experts_per_token));
  // vLLM's Mxfp4Config quantizes FusedMoE experts only (quantization/mxfp4.py).
  if (c.quantization.method == WeightQuantization::Method::mxfp4 && !c.is_moe())
    throw InputError(fmt::format("{}: key 'quantization_config.quant_method': mxfp4 quantizes MoE experts only, and "
                                 "model_type '{}' here has none",
                                 source, mt));
  return c;
}

namespace {

// What a model given by its config.json is called: the Hub id transformers wrote as `_name_or_path`
// when it saved the config; else, in the Hugging Face cache's layout
// (models--<org>--<name>/snapshots/<revision>/config.json), "<org>/<name>"; else the folder's parent
// and name ("meta-llama/Llama-3.1-8B"), never a bare folder name such as "models" (issue 17).
std::string model_name(const json& j, const std::filesystem::path& file, const std::string& source) {
  Reader r(j, source);
  if (auto written = r.string("_name_or_path")) {
    if (written->size() > 256) r.fail("_name_or_path", fmt::format("expected at most 256 characters, got {}", written->size()));
    for (unsigned char c : *written)
      if (c < 0x20 || c == 0x7f) r.fail("_name_or_path", "expected a name without control characters");
    // A local path (saved from a folder) names someone else's disk: use its last two parts.
    const bool local = written->starts_with('/') || written->starts_with('.') || written->starts_with('~') ||
                       written->find('\\') != std::string::npos;
    if (!written->empty() && !local) return *written;
    if (local) {
      std::filesystem::path p(*written);
      while (!p.empty() && p.filename().empty()) p = p.parent_path();  // a trailing '/'
      if (!p.filename().empty()) {
        std::string parent = p.parent_path().filename().string();
        std::string name = p.filename().string();
        if (name != "." && name != ".." && !name.empty())
          return parent.empty() || parent == "." || parent == ".." || parent == "/" ? name : parent + "/" + name;
      }
    }
  }
  std::filesystem::path folder = std::filesystem::absolute(file).lexically_normal().parent_path();
  std::string name = folder.filename().string();
  std::string parent = folder.parent_path().filename().string();
  const std::string grand = folder.parent_path().parent_path().filename().string();
  if (parent == "snapshots" && grand.starts_with("models--")) {
    const std::string id = grand.substr(8);
    const auto at = id.find("--");
    return at == std::string::npos ? id : id.substr(0, at) + "/" + id.substr(at + 2);
  }
  if (name.empty()) return file.stem().string();
  return parent.empty() ? name : parent + "/" + name;
}

}  // namespace

ModelConfig load_hf_config(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  fs::path file = fs::is_directory(path) ? path / "config.json" : path;
  refuse_special_file(file, "model config");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open the model config", file.string()));
  const std::string text = read_text_file(file, "model config");
  const json j = parse_json_text(text, file.string());
  ModelConfig c = parse_hf_config(j, file.string(), "");
  c.name = model_name(j, file, file.string());
  return c;
}

}  // namespace headroom::model
