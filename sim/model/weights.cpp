#include "sim/model/weights.hpp"

#include <fmt/format.h>

#include "sim/core/checked.hpp"
#include "sim/core/error.hpp"
#include "sim/model/tensor_parallel.hpp"

namespace headroom::model {

namespace {

[[noreturn]] void too_large(const std::string& name) {
  throw InputError(fmt::format("weight tensor {}: its size does not fit in 64 bits (a model dimension is beyond "
                               "the limits of docs/limits.md)",
                               name));
}

}  // namespace

std::int64_t WeightTensor::elements() const {
  std::int64_t n = 1;
  for (auto d : shape)
    if (auto m = checked_mul<std::int64_t>(n, d)) n = *m;
    else too_large(name);
  return n;
}

Bytes WeightTensor::bytes() const {
  if (auto b = checked_mul<Bytes>(static_cast<Bytes>(elements()), dtype_bytes(dtype))) return *b;
  too_large(name);
}

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Emits tensors in the order vLLM's model classes create their parameters: per decoder layer
// attention, then MLP/MoE, then the two norms (vllm/model_executor/models/llama.py, qwen2.py,
// qwen3.py, qwen3_moe.py, mixtral.py, deepseek_v2.py, deepseek_mtp.py, gpt_oss.py, gemma2.py,
// gemma3.py; Mistral is served by llama.py).
class WeightBuilder {
 public:
  WeightBuilder(const ModelConfig& config, const WeightOptions& options)
      : c_(config),
        o_(options),
        shard_(options.placement ? rank_shard(config, *options.placement) : tensor_parallel_shard(config, options.tp)) {}

  // One weight of [out, in] as linear() or moe() lays it out, without bias: its bytes.
  Bytes one_weight(std::int64_t out, std::int64_t in, bool expert) {
    if (!expert) {
      linear("w", out, in);
    } else if (method() != Method::none && !fp8_block()) {
      quantized("w.", {1}, out, in, 1, 0);
    } else {
      tensor("w.weight", {out, in}, fp8_block() ? DType::fp8 : c_.dtype);
      if (fp8_block())
        tensor("w.weight_scale_inv", {ceil_div(out, c_.quantization.block_n), ceil_div(in, c_.quantization.block_k)},
               DType::fp32, true);
    }
    return list_.bytes;
  }

  WeightList build() {
    // Under pipeline parallelism a stage builds only its own layers (vllm models/utils.py
    // make_layers: PPMissingLayer elsewhere); the embedding, final norm and lm_head where
    // TensorParallelShard places them.
    // Llama4ForConditionalGeneration.__init__ builds the vision tower and projector first, on every
    // pipeline stage (mllama4.py: not behind a pipeline-rank check).
    if (c_.vision.layers > 0) vision_tower();
    if (shard_.has_embedding) embedding("model.embed_tokens");
    for (int l = shard_.first_layer; l < shard_.end_layer; ++l) decoder_layer(fmt::format("model.layers.{}.", l), l);
    if (shard_.has_lm_head) {
      norm("model.norm", c_.hidden);
      if (!c_.tie_word_embeddings) embedding("lm_head");
    }
    if (o_.include_mtp)
      for (int k = 0; k < c_.mtp_layers; ++k) mtp_layer(c_.layers + k);
    return std::move(list_);
  }

 private:
  void tensor(std::string name, std::vector<std::int64_t> shape, DType dtype, bool is_scale = false,
              int values_per_element = 1) {
    WeightTensor t{std::move(name), std::move(shape), dtype, is_scale, values_per_element};
    auto values = checked_mul<std::int64_t>(t.elements(), values_per_element);
    auto parameters =
        values ? checked_add<std::int64_t>(list_.parameters, is_scale ? 0 : *values) : std::optional<std::int64_t>{};
    auto bytes = checked_add<Bytes>(list_.bytes, t.bytes());
    if (!parameters || !bytes) too_large(t.name);
    list_.parameters = *parameters;
    list_.bytes = *bytes;
    list_.tensors.push_back(std::move(t));
  }

  using Method = WeightQuantization::Method;
  Method method() const { return c_.quantization.method; }
  bool fp8_block() const { return method() == Method::fp8_block; }

  // VocabParallelEmbedding / ParallelLMHead: [vocab rows per rank, hidden].
  void embedding(const std::string& prefix) {
    std::int64_t rows = o_.pad_vocab ? shard_.vocab : ceil_div(c_.vocab, shard_.tp);
    tensor(prefix + ".weight", {rows, c_.hidden}, c_.dtype);
  }

  void norm(const std::string& prefix, std::int64_t size) { tensor(prefix + ".weight", {size}, c_.dtype); }

  // `count` divides `size`, else the format cannot hold this weight on a rank: vLLM refuses it too.
  std::int64_t divide(const std::string& name, std::int64_t size, std::int64_t count, std::string_view what) const {
    if (size % count != 0)
      throw InputError(fmt::format("weight {}: {} {} is not divisible by {} ({}; at tensor parallel {})", name, what,
                                   size, count, quantization_name(method()), shard_.tp));
    return size / count;
  }

  // The tensors of one quantized weight of [out, in] on this rank, each emitted as
  // `prefix + <vLLM name>` with `lead` dimensions in front (the expert count for FusedMoE).
  // `partitions`: the logical weights fused into it (qkv 3, gate_up 2), each with its own
  // per-tensor scale; `in_full`: the unsplit input of a row-parallel layer (GPTQ act-order keeps
  // its scales whole there).
  void quantized(const std::string& prefix, const std::vector<std::int64_t>& lead, std::int64_t out, std::int64_t in,
                 std::int64_t partitions, std::int64_t in_full) {
    const WeightQuantization& q = c_.quantization;
    auto shape = [&](std::initializer_list<std::int64_t> dims) {
      std::vector<std::int64_t> s = lead;
      s.insert(s.end(), dims);
      return s;
    };
    switch (q.method) {
      case Method::none:
      case Method::fp8_block:
        break;  // linear() and moe() lay these out
      case Method::fp8_tensor:
      case Method::fp8_channel:
        // vllm quantization/fp8.py Fp8LinearMethod (per-tensor: one float32 scale per logical
        // weight); compressed_tensors_w8a8_fp8.py (channel: [out, 1]); input_scale when static.
        tensor(prefix + "weight", shape({out, in}), DType::fp8);
        if (q.method == Method::fp8_tensor)
          tensor(prefix + "weight_scale", shape({partitions}), DType::fp32, true);
        else
          tensor(prefix + "weight_scale", shape({out, 1}), DType::fp32, true);
        if (q.static_input_scale) tensor(prefix + "input_scale", shape({partitions}), DType::fp32, true);
        break;
      case Method::gptq: {
        // vllm quantization/gptq.py (and gptq_marlin.py, same shapes): qweight packs 32/bits values
        // of a column along the input; g_idx maps input rows to groups; qzeros pack along the output.
        const int pack = 32 / q.bits;
        const std::int64_t scale_in = in_full > in && q.group_size > 0 && q.act_order ? in_full : in;
        const std::int64_t groups = q.group_size > 0 ? divide(prefix + "scales", scale_in, q.group_size, "input") : 1;
        tensor(prefix + "qweight", shape({divide(prefix + "qweight", in, pack, "input"), out}), DType::int32, false, pack);
        tensor(prefix + "g_idx", shape({in}), DType::int32, true);
        tensor(prefix + "qzeros", shape({groups, divide(prefix + "qzeros", out, pack, "output")}), DType::int32, true);
        tensor(prefix + "scales", shape({groups, out}), c_.dtype, true);
        break;
      }
      case Method::awq: {
        // vllm quantization/awq.py (and awq_marlin.py): int4 packed eight to an int32 along the output.
        const int pack = 32 / q.bits;
        const std::int64_t groups = q.group_size > 0 ? divide(prefix + "scales", in, q.group_size, "input") : 1;
        const std::int64_t packed_out = divide(prefix + "qweight", out, pack, "output");
        tensor(prefix + "qweight", shape({in, packed_out}), DType::int32, false, pack);
        tensor(prefix + "qzeros", shape({groups, packed_out}), DType::int32, true);
        tensor(prefix + "scales", shape({groups, out}), c_.dtype, true);
        break;
      }
      case Method::mxfp4:
        // vllm quantization/mxfp4.py Mxfp4MoEMethod: fp4 pairs in uint8, an e8m0 scale per 32 values.
        tensor(prefix + "weight", shape({out, divide(prefix + "weight", in, 2, "input")}), DType::uint8, false, 2);
        tensor(prefix + "weight_scale", shape({out, divide(prefix + "weight_scale", in, 32, "input")}), DType::uint8,
               true);
        break;
      case Method::wna16: {
        // vllm compressed_tensors/schemes/compressed_tensors_wNa16.py CompressedTensorsWNA16.create_weights
        // (commit 519b90d4): weight_packed int32 [out, in / (32 / bits)], weight_scale [out, in / group]
        // in the model dtype (one column per row under strategy channel), weight_shape int64 [2], and
        // with actorder group a weight_g_idx int32 [in]. marlin_repeat_scales_on_all_ranks keeps a
        // row-parallel layer's scales whole with act-order (channel scales are [out, 1] anyway).
        if (!lead.empty())
          throw InputError(fmt::format("weight {}: compressed-tensors wNa16 experts (CompressedTensorsWNA16MoEMethod) "
                                       "are not modelled; dense models only",
                                       prefix));
        const int pack = 32 / q.bits;
        const std::int64_t scale_in = in_full > in && q.act_order ? in_full : in;
        const std::int64_t groups =
            q.group_size > 0 ? divide(prefix + "weight_scale", scale_in, q.group_size, "input") : 1;
        tensor(prefix + "weight_packed", {out, divide(prefix + "weight_packed", in, pack, "input")}, DType::int32, false,
               pack);
        tensor(prefix + "weight_scale", {out, groups}, c_.dtype, true);
        tensor(prefix + "weight_shape", {2}, DType::int64, true);
        if (q.act_order) tensor(prefix + "weight_g_idx", {in}, DType::int32, true);
        break;
      }
      case Method::nvfp4:
        // vllm quantization/modelopt.py ModelOptNvFp4LinearMethod: fp4 pairs in uint8, an fp8 (e4m3)
        // scale per 16 values, a float32 global scale and input scale per logical weight.
        tensor(prefix + "weight", shape({out, divide(prefix + "weight", in, 2, "input")}), DType::uint8, false, 2);
        tensor(prefix + "input_scale", shape({partitions}), DType::fp32, true);
        tensor(prefix + "weight_scale_2", shape({partitions}), DType::fp32, true);
        tensor(prefix + "weight_scale", shape({out, divide(prefix + "weight_scale", in, q.group_size, "input")}),
               DType::fp8, true);
        break;
    }
  }

  // A linear layer's weight [out, in] on this rank (shapes already split). Block-fp8 checkpoints
  // add a float32 weight_scale_inv of [ceil(out/block_n), ceil(in/block_k)]
  // (vllm quantization/fp8.py Fp8LinearMethod.create_weights); other formats as quantized() lays
  // them out; MXFP4 leaves linear layers unquantized (mxfp4.py: UnquantizedLinearMethod). The bias
  // follows (linear.py).
  void linear(const std::string& prefix, std::int64_t out, std::int64_t in, bool quantizable = true,
              bool bias = false, std::int64_t partitions = 1, std::int64_t in_full = 0) {
    const bool quantize = quantizable && method() != Method::none && method() != Method::mxfp4;
    if (quantize && !fp8_block()) {
      quantized(prefix + ".", {}, out, in, partitions, in_full);
    } else {
      bool fp8 = quantize && fp8_block();
      tensor(prefix + ".weight", {out, in}, fp8 ? DType::fp8 : c_.dtype);
      if (fp8)
        tensor(prefix + ".weight_scale_inv",
               {ceil_div(out, c_.quantization.block_n), ceil_div(in, c_.quantization.block_k)}, DType::fp32, true);
    }
    if (bias) tensor(prefix + ".bias", {out}, c_.dtype);
  }

  void decoder_layer(const std::string& p, int layer) {
    if (c_.is_mla())
      mla_attention(p + "self_attn.");
    else
      attention(p + "self_attn.");
    // llama4.py names the MLP or MoE block feed_forward.
    const std::string ff = p + (c_.architecture == Architecture::llama4 ? "feed_forward." : "mlp.");
    if (c_.is_moe_layer(layer))
      moe(ff);
    else
      mlp(ff, c_.intermediate / shard_.tp);
    norm(p + "input_layernorm", c_.hidden);
    norm(p + "post_attention_layernorm", c_.hidden);
    // gemma2.py / gemma3.py: RMSNorms before and after the MLP as well.
    if (c_.architecture == Architecture::gemma2 || c_.architecture == Architecture::gemma3_text) {
      norm(p + "pre_feedforward_layernorm", c_.hidden);
      norm(p + "post_feedforward_layernorm", c_.hidden);
    }
  }

  // QKVParallelLinear: (q heads + 2 × KV heads) × head_dim rows per rank; KV heads replicated when
  // tp > kv_heads. o_proj is RowParallelLinear: its input (q heads × head_dim) is split.
  void attention(const std::string& p) {
    std::int64_t d = c_.head_dim;
    std::int64_t q = shard_.q_heads * d;
    std::int64_t kv = shard_.kv_heads * d;
    linear(p + "qkv_proj", q + 2 * kv, c_.hidden, true, c_.qkv_bias, 3);
    linear(p + "o_proj", c_.hidden, q, true, c_.o_proj_bias, 1, q * shard_.attn_tp);
    // gpt_oss.py: one sink logit per query head on this rank, bfloat16.
    if (c_.attention_sinks) tensor(p + "sinks", {shard_.q_heads}, DType::bf16);
    if (c_.has_qk_norm()) {
      norm(p + "q_norm", d);
      norm(p + "k_norm", d);
    }
  }

  // deepseek_v2.py DeepseekV2MLAAttention: the down-projections to the q and kv latents are
  // replicated (fused_qkv_a_proj, disable_tp); q_b_proj / kv_b_proj are column-parallel over
  // heads; o_proj is row-parallel.
  void mla_attention(const std::string& p) {
    std::int64_t heads = shard_.q_heads;
    std::int64_t qk = c_.qk_nope_head_dim + c_.qk_rope_head_dim;
    std::int64_t latent = c_.kv_lora_rank + c_.qk_rope_head_dim;
    if (c_.q_lora_rank > 0) {
      linear(p + "fused_qkv_a_proj", c_.q_lora_rank + latent, c_.hidden, true, false, 2);
      norm(p + "q_a_layernorm", c_.q_lora_rank);
      linear(p + "q_b_proj", heads * qk, c_.q_lora_rank);
    } else {
      linear(p + "q_proj", heads * qk, c_.hidden);
      linear(p + "kv_a_proj_with_mqa", latent, c_.hidden);
    }
    norm(p + "kv_a_layernorm", c_.kv_lora_rank);
    linear(p + "kv_b_proj", heads * (c_.qk_nope_head_dim + c_.v_head_dim), c_.kv_lora_rank);
    linear(p + "o_proj", c_.hidden, heads * c_.v_head_dim, true, false, 1, heads * c_.v_head_dim * shard_.attn_tp);
  }

  // MergedColumnParallelLinear gate_up_proj [2 × I/tp, H]; RowParallelLinear down_proj [H, I/tp].
  void mlp(const std::string& p, std::int64_t width_per_rank) {
    linear(p + "gate_up_proj", 2 * width_per_rank, c_.hidden, true, false, 2);
    linear(p + "down_proj", c_.hidden, width_per_rank, true, false, 1, width_per_rank * shard_.tp);
  }

  void moe(const std::string& p) {
    // The router sees every expert; the expert tensors hold this rank's experts only (EP).
    const std::int64_t routed = c_.experts;
    std::int64_t e = shard_.local_experts;
    // The router is a ReplicatedLinear built without quant_config: unquantized on every rank
    // (gpt-oss calls it `router` and gives it a bias).
    const bool llama4 = c_.architecture == Architecture::llama4;
    linear(p + (c_.moe_bias || llama4 ? "router" : "gate"), routed, c_.hidden, false, c_.moe_bias);
    // DeepSeek-V3's noaux_tc routing keeps a float32 bias per expert (deepseek_v2.py).
    if (c_.architecture == Architecture::deepseek_v3)
      tensor(p + "gate.e_score_correction_bias", {routed}, DType::fp32);
    // Llama4MoE's shared_expert is a LlamaMLP as wide as one expert.
    if (c_.shared_experts > 0)
      mlp(p + (llama4 ? "shared_expert." : "shared_experts."), c_.shared_experts * c_.moe_intermediate / shard_.tp);
    // FusedMoE (layers/fused_moe/layer.py): all experts in one tensor each, split by TP on the
    // expert width: w13 [E, 2 × I/tp, H], w2 [E, H, I/tp], with E the rank's experts and tp the
    // expert TP size (fused_moe/config.py FusedMoEParallelConfig).
    std::int64_t n = c_.moe_intermediate / shard_.moe_tp;
    if (method() == Method::mxfp4) {
      // Mxfp4MoEMethod.create_weights pads the expert width per rank to a multiple of 64 on CUDA
      // (vllm quantization/mxfp4.py; 256 with FlashInfer's MXFP4 MoE, 128 on ROCm: not modelled).
      n = ceil_div(n, 64) * 64;
    }
    if (method() != Method::none && !fp8_block()) {
      // The expert tensors of the other formats: each expert's linear layout with the expert count
      // in front (fused_moe/layer.py with the format's FusedMoEMethod).
      quantized(p + "experts.w13_", {e}, 2 * n, c_.hidden, 2, 0);
      quantized(p + "experts.w2_", {e}, c_.hidden, n, 1, n * shard_.moe_tp);
    } else {
      DType w = fp8_block() ? DType::fp8 : c_.dtype;
      tensor(p + "experts.w13_weight", {e, 2 * n, c_.hidden}, w);
      tensor(p + "experts.w2_weight", {e, c_.hidden, n}, w);
      if (fp8_block()) {
        // Fp8MoEMethod.create_weights, block-quantized: per-expert scale grids.
        std::int64_t bn = c_.quantization.block_n, bk = c_.quantization.block_k;
        tensor(p + "experts.w13_weight_scale_inv", {e, 2 * ceil_div(n, bn), ceil_div(c_.hidden, bk)}, DType::fp32,
               true);
        tensor(p + "experts.w2_weight_scale_inv", {e, ceil_div(c_.hidden, bn), ceil_div(n, bk)}, DType::fp32, true);
      }
    }
    // Expert biases: gpt-oss's (FusedMoE has_bias); Mxfp4MoEMethod creates them always, bfloat16.
    if (c_.moe_bias || method() == Method::mxfp4) {
      const DType b = method() == Method::mxfp4 ? DType::bf16 : c_.dtype;
      tensor(p + "experts.w13_bias", {e, 2 * n}, b);
      tensor(p + "experts.w2_bias", {e, c_.hidden}, b);
    }
  }

  // Llama 4's vision tower, pixel-shuffle adapter and multimodal projector as vLLM builds them
  // (vllm/model_executor/models/mllama4.py Llama4VisionModel, Llama4MultiModalProjector) with the
  // encoder not data-parallel (enable_multimodal_encoder_data_parallel off, the default): sharded
  // like the decoder's linear layers; built with quant_config None (the model dtype); LayerNorms
  // with weight and bias.
  void vision_tower() {
    const VisionTower& v = c_.vision;
    const std::string p = "vision_model.";
    const std::int64_t tp = shard_.tp;
    const std::int64_t h = v.hidden;
    auto vdivide = [&](std::int64_t size, std::string_view what) {
      if (size % tp != 0)
        throw InputError(fmt::format("vision tower: {} {} is not divisible by the tensor parallel size {} "
                                     "(mllama4.py shards it)",
                                     what, size, tp));
      return size / tp;
    };
    auto layer_norm = [&](const std::string& name, std::int64_t size) {
      tensor(name + ".weight", {size}, c_.dtype);
      tensor(name + ".bias", {size}, c_.dtype);
    };
    // Llama4UnfoldConvolution: a ColumnParallelLinear [hidden/tp, channels × patch²] without bias.
    const std::int64_t patches = static_cast<std::int64_t>(v.image_size / v.patch_size) * (v.image_size / v.patch_size);
    tensor(p + "patch_embedding.linear.weight",
           {vdivide(h, "hidden_size"), std::int64_t{v.channels} * v.patch_size * v.patch_size}, c_.dtype);
    tensor(p + "class_embedding", {h}, c_.dtype);
    tensor(p + "positional_embedding_vlm", {patches + 1, h}, c_.dtype);
    layer_norm(p + "layernorm_pre", h);
    layer_norm(p + "layernorm_post", h);
    const std::int64_t heads = vdivide(v.heads, "num_attention_heads");
    const std::int64_t head_dim = h / v.heads;
    const std::int64_t inter = vdivide(v.intermediate, "intermediate_size");
    for (int l = 0; l < v.layers; ++l) {
      const std::string q = fmt::format("{}model.layers.{}.", p, l);
      // Llama4VisionAttention: QKVParallelLinear and RowParallelLinear, both with bias.
      tensor(q + "self_attn.qkv_proj.weight", {3 * heads * head_dim, h}, c_.dtype);
      tensor(q + "self_attn.qkv_proj.bias", {3 * heads * head_dim}, c_.dtype);
      tensor(q + "self_attn.o_proj.weight", {h, heads * head_dim}, c_.dtype);
      tensor(q + "self_attn.o_proj.bias", {h}, c_.dtype);
      // Llama4VisionMLP: fc1 column-parallel, fc2 row-parallel, both with bias.
      tensor(q + "mlp.fc1.weight", {inter, h}, c_.dtype);
      tensor(q + "mlp.fc1.bias", {inter}, c_.dtype);
      tensor(q + "mlp.fc2.weight", {h, inter}, c_.dtype);
      tensor(q + "mlp.fc2.bias", {h}, c_.dtype);
      layer_norm(q + "input_layernorm", h);
      layer_norm(q + "post_attention_layernorm", h);
    }
    // Llama4VisionPixelShuffleMLP: fc1 [projector_input_dim/tp, intermediate_size], fc2
    // [projector_output_dim, projector_input_dim/tp], biases when multi_modal_projector_bias.
    const std::int64_t adapter = vdivide(v.projector_input, "projector_input_dim");
    tensor(p + "vision_adapter.mlp.fc1.weight", {adapter, v.intermediate}, c_.dtype);
    if (v.projector_bias) tensor(p + "vision_adapter.mlp.fc1.bias", {adapter}, c_.dtype);
    tensor(p + "vision_adapter.mlp.fc2.weight", {v.projector_output, adapter}, c_.dtype);
    if (v.projector_bias) tensor(p + "vision_adapter.mlp.fc2.bias", {v.projector_output}, c_.dtype);
    // Llama4MultiModalProjector.linear_1: ColumnParallelLinear [text hidden/tp, vision_output_dim].
    tensor("multi_modal_projector.linear_1.weight", {vdivide(c_.hidden, "the text hidden_size"), v.output}, c_.dtype);
  }

  // One DeepSeek multi-token-prediction module as stored at model.layers.<L+k> in the checkpoint
  // (deepseek_mtp.py): its own embedding, enorm/hnorm, eh_proj (a plain nn.Linear [H, 2H],
  // unquantized and replicated), shared_head (norm + vocab-parallel head) and one decoder layer.
  void mtp_layer(int index) {
    std::string p = fmt::format("model.layers.{}.", index);
    embedding(p + "embed_tokens");
    norm(p + "enorm", c_.hidden);
    norm(p + "hnorm", c_.hidden);
    linear(p + "eh_proj", c_.hidden, 2 * static_cast<std::int64_t>(c_.hidden), false);
    norm(p + "shared_head.norm", c_.hidden);
    embedding(p + "shared_head.head");
    decoder_layer(p, index);
  }

  const ModelConfig& c_;
  WeightOptions o_;
  TensorParallelShard shard_;
  WeightList list_;
};

}  // namespace

WeightList model_weights(const ModelConfig& config, const WeightOptions& options) {
  return WeightBuilder(config, options).build();
}

Bytes linear_weight_bytes(const ModelConfig& config, std::int64_t out, std::int64_t in, bool expert) {
  return WeightBuilder(config, WeightOptions{}).one_weight(out, in, expert);
}

std::int64_t parameter_count(const ModelConfig& config, bool include_mtp) {
  WeightOptions options;
  options.include_mtp = include_mtp;
  options.pad_vocab = false;
  return model_weights(config, options).parameters;
}

}  // namespace headroom::model
