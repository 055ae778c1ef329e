// Weight tensors per tensor-parallel rank: splits, replication, vocabulary padding, MoE and MLA.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sim/allocator/caching_allocator.hpp"
#include "sim/core/error.hpp"
#include "sim/model/catalogue.hpp"
#include "sim/model/hf_config.hpp"
#include "sim/model/rotary_cache.hpp"
#include "sim/model/tensor_parallel.hpp"
#include "sim/model/weights.hpp"
#include "tests/model/weight_tensors.hpp"

using namespace headroom;
using namespace headroom::model;
using headroom::test::tensors_by_name;
using Shape = std::vector<std::int64_t>;

namespace {

WeightList weights_at(const std::string& model, int tp) {
  WeightOptions o;
  o.tp = tp;
  return model_weights(catalogue_model(model), o);
}

}  // namespace

TEST_CASE("Llama-3.1-8B load order and shapes at TP 1") {
  WeightList w = weights_at("Llama-3.1-8B", 1);
  REQUIRE(w.tensors.size() == 1 + 32 * 6 + 2);
  CHECK(w.tensors[0].name == "model.embed_tokens.weight");
  CHECK(w.tensors[0].shape == Shape{128256, 4096});
  CHECK(w.tensors[1].name == "model.layers.0.self_attn.qkv_proj.weight");
  CHECK(w.tensors[1].shape == Shape{(32 + 2 * 8) * 128, 4096});
  CHECK(w.tensors[2].name == "model.layers.0.self_attn.o_proj.weight");
  CHECK(w.tensors[3].name == "model.layers.0.mlp.gate_up_proj.weight");
  CHECK(w.tensors[3].shape == Shape{2 * 14336, 4096});
  CHECK(w.tensors[4].name == "model.layers.0.mlp.down_proj.weight");
  CHECK(w.tensors[4].shape == Shape{4096, 14336});
  CHECK(w.tensors[5].name == "model.layers.0.input_layernorm.weight");
  CHECK(w.tensors[6].name == "model.layers.0.post_attention_layernorm.weight");
  CHECK(w.tensors[w.tensors.size() - 2].name == "model.norm.weight");
  CHECK(w.tensors.back().name == "lm_head.weight");
  for (const auto& t : w.tensors) CHECK(t.dtype == DType::bf16);
  CHECK(w.bytes == 16'060'522'496);
}

TEST_CASE("Llama-3.1-70B at TP 8 has one KV head per rank, at TP 16 it is replicated") {
  auto tp8 = tensors_by_name(weights_at("Llama-3.1-70B", 8));
  // 64 / 8 = 8 query heads and 8 / 8 = 1 KV head per rank.
  CHECK(tp8.at("model.layers.0.self_attn.qkv_proj.weight").shape == Shape{(8 + 2 * 1) * 128, 8192});
  CHECK(tp8.at("model.layers.0.self_attn.o_proj.weight").shape == Shape{8192, 8 * 128});
  CHECK(tp8.at("model.layers.0.mlp.gate_up_proj.weight").shape == Shape{2 * 28672 / 8, 8192});
  CHECK(tp8.at("model.layers.0.mlp.down_proj.weight").shape == Shape{8192, 28672 / 8});
  CHECK(tp8.at("model.embed_tokens.weight").shape == Shape{128256 / 8, 8192});
  CHECK(tp8.at("model.layers.0.input_layernorm.weight").shape == Shape{8192});  // replicated

  auto tp16 = tensors_by_name(weights_at("Llama-3.1-70B", 16));
  // 4 query heads per rank; 8 KV heads on 16 ranks: each rank keeps one, shared by two ranks.
  CHECK(tp16.at("model.layers.0.self_attn.qkv_proj.weight").shape == Shape{(4 + 2 * 1) * 128, 8192});
  TensorParallelShard s = tensor_parallel_shard(catalogue_model("Llama-3.1-70B"), 16);
  CHECK(s.kv_heads == 1);
  CHECK(s.kv_head_replicas == 2);
}

TEST_CASE("vocabulary is padded to a multiple of 64 before the TP split") {
  ModelConfig c = catalogue_model("Llama-3.1-8B");
  c.vocab = 32001;  // pads to 32064
  WeightOptions o;
  o.tp = 2;
  auto w = tensors_by_name(model_weights(c, o));
  CHECK(w.at("model.embed_tokens.weight").shape == Shape{32064 / 2, 4096});
  CHECK(w.at("lm_head.weight").shape == Shape{32064 / 2, 4096});
  CHECK(tensor_parallel_shard(c, 1).vocab == 32064);
  // The published parameter count uses the real vocabulary.
  o.tp = 1;
  CHECK(model_weights(c, o).parameters - parameter_count(c) == 2 * 63 * 4096);
}

TEST_CASE("Qwen2.5-7B carries q/k/v biases split with their projections") {
  auto w = tensors_by_name(weights_at("Qwen2.5-7B", 4));
  CHECK(w.at("model.layers.0.self_attn.qkv_proj.bias").shape == Shape{(7 + 2 * 1) * 128});
  CHECK(w.count("model.layers.0.self_attn.o_proj.bias") == 0);
}

TEST_CASE("MoE experts are split by TP on their width and routers are replicated") {
  auto q = tensors_by_name(weights_at("Qwen3-30B-A3B", 4));
  CHECK(q.at("model.layers.0.mlp.gate.weight").shape == Shape{128, 2048});
  CHECK(q.at("model.layers.0.mlp.experts.w13_weight").shape == Shape{128, 2 * 768 / 4, 2048});
  CHECK(q.at("model.layers.0.mlp.experts.w2_weight").shape == Shape{128, 2048, 768 / 4});
  CHECK(q.at("model.layers.0.self_attn.k_norm.weight").shape == Shape{128});

  auto m = tensors_by_name(weights_at("Mixtral-8x7B", 8));
  CHECK(m.at("model.layers.31.mlp.experts.w13_weight").shape == Shape{8, 2 * 14336 / 8, 4096});
  CHECK(m.at("model.embed_tokens.weight").shape == Shape{32000 / 8, 4096});
}

TEST_CASE("DeepSeek-V3 MLA, dense prefix, shared expert and FP8 block scales at TP 8") {
  auto w = tensors_by_name(weights_at("DeepSeek-V3", 8));
  // Replicated down-projections to the q latent (1536) and the kv latent + rope key (576).
  CHECK(w.at("model.layers.0.self_attn.fused_qkv_a_proj.weight").shape == Shape{1536 + 576, 7168});
  CHECK(w.at("model.layers.0.self_attn.fused_qkv_a_proj.weight").dtype == DType::fp8);
  CHECK(w.at("model.layers.0.self_attn.fused_qkv_a_proj.weight_scale_inv").shape == Shape{17, 56});
  CHECK(w.at("model.layers.0.self_attn.q_a_layernorm.weight").shape == Shape{1536});
  CHECK(w.at("model.layers.0.self_attn.q_b_proj.weight").shape == Shape{16 * 192, 1536});
  CHECK(w.at("model.layers.0.self_attn.kv_a_layernorm.weight").shape == Shape{512});
  CHECK(w.at("model.layers.0.self_attn.kv_b_proj.weight").shape == Shape{16 * 256, 512});
  CHECK(w.at("model.layers.0.self_attn.o_proj.weight").shape == Shape{7168, 16 * 128});
  // Layers 0-2 are dense; 3+ have 256 routed experts and one shared expert.
  CHECK(w.at("model.layers.2.mlp.gate_up_proj.weight").shape == Shape{2 * 18432 / 8, 7168});
  CHECK(w.count("model.layers.2.mlp.experts.w13_weight") == 0);
  CHECK(w.at("model.layers.3.mlp.gate.weight").dtype == DType::bf16);
  CHECK(w.at("model.layers.3.mlp.gate.e_score_correction_bias").dtype == DType::fp32);
  CHECK(w.at("model.layers.3.mlp.shared_experts.gate_up_proj.weight").shape == Shape{2 * 2048 / 8, 7168});
  CHECK(w.at("model.layers.3.mlp.experts.w13_weight").shape == Shape{256, 2 * 256, 7168});
  CHECK(w.at("model.layers.3.mlp.experts.w13_weight_scale_inv").shape == Shape{256, 2 * 2, 56});
  CHECK(w.at("model.layers.3.mlp.experts.w2_weight_scale_inv").shape == Shape{256, 56, 2});
  CHECK(w.at("model.embed_tokens.weight").dtype == DType::bf16);
  CHECK(w.count("model.layers.61.eh_proj.weight") == 0);  // MTP only on request
}

TEST_CASE("TP sizes that do not divide the model are errors") {
  ModelConfig c = catalogue_model("Llama-3.1-8B");
  WeightOptions o;
  o.tp = 3;
  CHECK_THROWS_WITH(model_weights(c, o), "model 'Llama-3.1-8B': total number of attention heads (32) must be "
                                         "divisible by tensor parallel size (3)");
  o.tp = 0;
  CHECK_THROWS_WITH(model_weights(c, o), "tensor parallel size must be at least 1, got 0");
  c.kv_heads = 8;
  c.heads = 48;  // tp 12 > 8 KV heads but not a multiple of 8
  CHECK_THROWS_WITH(tensor_parallel_shard(c, 12), "model 'Llama-3.1-8B': tensor parallel size (12) must be a "
                                                  "multiple of the number of KV heads (8) when it exceeds it");
}

namespace {

// The catalogue's Llama-3.1-8B with the quantization of a checkpoint in `format` (the layout
// vLLM allocates for it; weights.cpp).
ModelConfig llama_8b_as(WeightQuantization q, DType dtype = DType::bf16) {
  ModelConfig c = catalogue_model("Llama-3.1-8B");
  c.quantization = q;
  c.dtype = dtype;
  return c;
}

WeightQuantization quantization(WeightQuantization::Method method, int bits = 0, int group_size = 0) {
  WeightQuantization q;
  q.method = method;
  q.bits = bits;
  q.group_size = group_size;
  return q;
}

// A checkpoint's size: TP 1, the vocabulary as stored (unpadded).
Bytes checkpoint_bytes(const ModelConfig& c) {
  WeightOptions o;
  o.pad_vocab = false;
  return model_weights(c, o).bytes;
}

// Loads `w` through PyTorch's caching allocator in load order, as the engine's start-up does, on a
// device too large to fail: vLLM's rotary tables where the model's layers build them
// (rotary_cache.hpp: layer 0's attention, after o_proj), then `after_loading`; tensors whose name
// ends with `skip` are left out. Returns the allocated bytes: what vLLM's CudaMemoryProfiler reads.
Bytes allocated_after_loading(const WeightList& w, const std::vector<RotaryTable>& tables,
                              const std::vector<Bytes>& after_loading, const std::string& skip = "") {
  device::DeviceSpec spec;
  spec.total = Bytes{1} << 50;
  device::Device gpu(spec);
  alloc::CachingAllocator allocator(gpu);
  bool all_allocated = true;
  const std::vector<std::ptrdiff_t> at = rotary_load_positions(w, tables);
  auto tables_at = [&](std::size_t i) {
    for (std::size_t k = 0; k < tables.size(); ++k)
      if (at[k] == static_cast<std::ptrdiff_t>(i)) all_allocated &= allocator.malloc(tables[k].bytes()) != nullptr;
  };
  for (std::size_t i = 0; i < w.tensors.size(); ++i) {
    tables_at(i);
    const auto& t = w.tensors[i];
    if (skip.empty() || !t.name.ends_with(skip)) all_allocated &= allocator.malloc(t.bytes()) != nullptr;
  }
  tables_at(w.tensors.size());
  for (Bytes b : after_loading) all_allocated &= allocator.malloc(b) != nullptr;
  REQUIRE(all_allocated);
  return allocator.allocated_bytes();
}

// A config.json under tests/model/configs/<folder>.
ModelConfig published_config(const std::string& folder) {
  return load_hf_config(std::filesystem::path(HEADROOM_SOURCE_DIR) / "tests" / "model" / "configs" / folder);
}

}  // namespace

TEST_CASE("published checkpoint sizes: bf16 Llama-3.1-8B and MXFP4 gpt-oss-20b") {
  // total_size of meta-llama/Llama-3.1-8B's model.safetensors.index.json.
  CHECK(checkpoint_bytes(catalogue_model("Llama-3.1-8B")) == 16'060'522'496);
  // total_size of openai/gpt-oss-20b's model.safetensors.index.json: bf16 attention (with biases
  // and sinks), routers and embeddings; experts as MXFP4 blocks (uint8 pairs) and e8m0 scales
  // (one per 32) with bf16 biases.
  CHECK(checkpoint_bytes(catalogue_model("gpt-oss-20b")) == 13'761'264'768);
}

TEST_CASE("published checkpoint sizes: bf16 Gemma-2-9B-it and Gemma-3-1B-it, embeddings tied") {
  // total_size of google/gemma-2-9b-it's model.safetensors.index.json: 9,241,705,984 bf16
  // parameters, the Gemma 2 report's 917,504,000 embedding + 8,324,201,984 non-embedding (four
  // RMSNorms per layer, no lm_head).
  CHECK(checkpoint_bytes(catalogue_model("gemma-2-9b-it")) == 18'483'411'968);
  // google/gemma-3-1b-it: 999,885,952 bf16 parameters, the Gemma 3 report's 302M embedding + 698M
  // non-embedding (q_norm and k_norm of 256 per layer).
  WeightOptions o;
  o.pad_vocab = false;
  CHECK(model_weights(catalogue_model("gemma-3-1b-it"), o).parameters == 999'885'952);
  CHECK(checkpoint_bytes(catalogue_model("gemma-3-1b-it")) == 2 * Bytes{999'885'952});
}

TEST_CASE("published checkpoint size: block FP8 DeepSeek-V3 with its MTP module, safetensors headers included") {
  // deepseek-ai/DeepSeek-V3 at revision afb92e1fa402c2be2a9eb085312bb02e0384d6c7: its 163
  // safetensors files hold 688,586,727,753 B (the repository's weight files, as a dataset on
  // GitHub records them; deepseek-ai/DeepSeek-R1 at 56d4cbbb the same). An odd count: file sizes,
  // as every tensor here has an even byte count. The checkpoint stores the
  // MTP module (layer 61, eh_proj in bf16 and its own embedding and head), so it is counted here.
  WeightOptions o;
  o.pad_vocab = false;
  o.include_mtp = true;
  const Bytes tensors = model_weights(catalogue_model("DeepSeek-V3"), o).bytes;
  CHECK(tensors == 688'574'839'360);
  // The files also hold each shard's 8-byte length and JSON header, one entry per tensor (name,
  // dtype, shape, data_offsets: about 130 B). The checkpoint keeps experts, q_a/kv_a and gate/up
  // apart: 91,991 tensors (per dense layer 20, per MoE layer 1,558, the MTP layer 1,564, plus
  // embedding, norm and head). The 11,888,393 B found are 129 B per tensor; allow 160.
  const Bytes published = 688'586'727'753;
  CHECK(published > tensors);
  CHECK(published - tensors < Bytes{91'991} * 160);
}

TEST_CASE("published loaded size: FP8 per-tensor nm-testing/Meta-Llama-3-8B-Instruct-FP8 in vLLM") {
  // neuralmagic/AutoFP8 README (commit 505a7eda): vLLM loading nm-testing/Meta-Llama-3-8B-Instruct-FP8
  // (quant_method fp8, activation_scheme static) logs "Loading model weights took 8.4596 GB", that
  // is torch.cuda.max_memory_allocated / 2^30 (vLLM utils.py CudaMemoryProfiler, May 2024), 4 decimals.
  const std::filesystem::path config = std::filesystem::path(HEADROOM_SOURCE_DIR) / "tests" / "model" / "configs" /
                                       "nm-testing" / "Meta-Llama-3-8B-Instruct-FP8";
  ModelConfig c = load_hf_config(config);
  REQUIRE(c.quantization.method == WeightQuantization::Method::fp8_tensor);
  REQUIRE(c.quantization.static_input_scale);
  WeightList w = model_weights(c);
  CHECK(w.bytes == 9'081'202'432);  // the checkpoint's tensors
  // What the allocator holds: every tensor rounded up to PyTorch's 512-byte blocks
  // (CUDACachingAllocator.cpp round_size, kMinBlockSize): the float32 scales take 512 B each
  // (vLLM's fp8.py folds a fused layer's scales to their maximum, still one tensor each).
  Bytes allocated = 0;
  for (const auto& t : w.tensors) allocated += (t.bytes() + 511) / 512 * 512;
  // Plus a buffer that is not a weight: the rotary cos_sin_cache [max_position_embeddings,
  // head_dim] in the model dtype (rotary_cache.hpp; vLLM rotary_embedding.py RotaryEmbedding),
  // 8192 x 128 x 2 B, one for all 32 layers.
  const std::vector<RotaryTable> rotary = rotary_tables(c, {});
  REQUIRE(rotary.size() == 1);
  CHECK(rotary[0].bytes() == Bytes{8192} * 128 * 2);
  allocated += rotary[0].bytes();
  const double gib = 1024.0 * 1024.0 * 1024.0;
  CHECK(std::abs(static_cast<double>(allocated) / gib - 8.4596) <= 0.00005);
}

TEST_CASE("published checkpoint size: FP8 per-channel neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8-dynamic, three digits") {
  // The repository's file list at revision 0906e2c0: model-00001-of-00002.safetensors "5 GB" and
  // model-00002-of-00002.safetensors "4.08 GB", decimal GB to three significant digits, so each
  // within 0.005 GB and both in [9.07, 9.09) GB. llm-compressor's FP8_DYNAMIC: FP8 weights with a
  // scale per output channel, activations quantized per token at run time (no input_scale).
  ModelConfig c = published_config("neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8-dynamic");
  REQUIRE(c.quantization.method == WeightQuantization::Method::fp8_channel);
  REQUIRE_FALSE(c.quantization.static_input_scale);
  WeightOptions o;
  o.pad_vocab = false;  // 128,256 is a multiple of 64 anyway
  WeightList w = model_weights(c, o);
  CHECK(w.bytes == 9'086'705'664);
  // The files add a header entry per tensor (515 here: weight and weight_scale of 7 projections
  // and 2 norms per layer, embedding, norm, head), at most 160 B each. The figure does not resolve
  // the scales (float32 [out, 1] as vLLM allocates them, 5.5 MB), only the FP8 weights and the
  // bf16 embedding, head and norms around them.
  CHECK(w.bytes + Bytes{515} * 160 >= 9'070'000'000);
  CHECK(w.bytes < 9'090'000'000);
}

TEST_CASE("MXFP4 experts as vLLM allocates them: padded to 64 per rank, biases in bf16") {
  auto w = tensors_by_name(weights_at("gpt-oss-20b", 1));
  CHECK(w.at("model.layers.0.mlp.experts.w13_weight").shape == Shape{32, 2 * 2880, 2880 / 2});
  CHECK(w.at("model.layers.0.mlp.experts.w13_weight").dtype == DType::uint8);
  CHECK(w.at("model.layers.0.mlp.experts.w13_weight_scale").shape == Shape{32, 2 * 2880, 2880 / 32});
  CHECK(w.at("model.layers.0.mlp.experts.w2_weight").shape == Shape{32, 2880, 2880 / 2});
  CHECK(w.at("model.layers.0.mlp.experts.w13_bias").shape == Shape{32, 2 * 2880});
  CHECK(w.at("model.layers.0.mlp.router.weight").dtype == DType::bf16);
  CHECK(w.at("model.layers.0.mlp.router.bias").shape == Shape{32});
  CHECK(w.at("model.layers.0.self_attn.sinks").shape == Shape{64});
  CHECK(w.at("model.layers.0.self_attn.qkv_proj.weight").dtype == DType::bf16);  // attention unquantized
  // TP 4: 2880 / 4 = 720 per rank, padded to 768 (mxfp4.py round_up(..., 64)).
  auto w4 = tensors_by_name(weights_at("gpt-oss-20b", 4));
  CHECK(w4.at("model.layers.0.mlp.experts.w13_weight").shape == Shape{32, 2 * 768, 2880 / 2});
  CHECK(w4.at("model.layers.0.mlp.experts.w2_weight_scale").shape == Shape{32, 2880, 768 / 32});
  CHECK(w4.at("model.layers.0.self_attn.sinks").shape == Shape{16});
}

TEST_CASE("INT4 GPTQ and AWQ layouts: packed int32 weights, zeros, group scales") {
  using M = WeightQuantization::Method;
  auto g = tensors_by_name(model_weights(llama_8b_as(quantization(M::gptq, 4, 128), DType::fp16)));
  // qkv: out 6144, in 4096. GPTQ packs 8 values of a column along the input.
  CHECK(g.at("model.layers.0.self_attn.qkv_proj.qweight").shape == Shape{4096 / 8, 6144});
  CHECK(g.at("model.layers.0.self_attn.qkv_proj.qweight").dtype == DType::int32);
  CHECK(g.at("model.layers.0.self_attn.qkv_proj.g_idx").shape == Shape{4096});
  CHECK(g.at("model.layers.0.self_attn.qkv_proj.qzeros").shape == Shape{4096 / 128, 6144 / 8});
  CHECK(g.at("model.layers.0.self_attn.qkv_proj.scales").shape == Shape{4096 / 128, 6144});
  CHECK(g.at("model.layers.0.self_attn.qkv_proj.scales").dtype == DType::fp16);
  CHECK(g.at("lm_head.weight").dtype == DType::fp16);  // the head stays unquantized
  auto a = tensors_by_name(model_weights(llama_8b_as(quantization(M::awq, 4, 128), DType::fp16)));
  // AWQ packs along the output.
  CHECK(a.at("model.layers.0.mlp.down_proj.qweight").shape == Shape{14336, 4096 / 8});
  CHECK(a.at("model.layers.0.mlp.down_proj.qzeros").shape == Shape{14336 / 128, 4096 / 8});
  CHECK(a.at("model.layers.0.mlp.down_proj.scales").shape == Shape{14336 / 128, 4096});
  CHECK(a.count("model.layers.0.mlp.down_proj.g_idx") == 0);
  // Packed values count as parameters once unpacked: the same 8.03 B as the bf16 model.
  CHECK(parameter_count(llama_8b_as(quantization(M::awq, 4, 128))) == 8'030'261'248);
  CHECK(parameter_count(llama_8b_as(quantization(M::gptq, 4, 128))) == 8'030'261'248);
  // Worked totals (fp16 embeddings and head 2 × 128256 × 4096 × 2 B, norms, and per layer the
  // packed weights, zeros and scales): GPTQ 5,731,262,464 B, AWQ 5,727,854,592 B; checked against
  // real checkpoints' file sizes below ("published checkpoint sizes: AWQ and GPTQ ...").
  CHECK(checkpoint_bytes(llama_8b_as(quantization(M::gptq, 4, 128), DType::fp16)) == 5'731'262'464);
  CHECK(checkpoint_bytes(llama_8b_as(quantization(M::awq, 4, 128), DType::fp16)) == 5'727'854'592);
}

TEST_CASE("published checkpoint sizes: AWQ and GPTQ Meta-Llama-3.1-8B-Instruct, safetensors files to the byte") {
  // xinyuwei-david/david-share, Deep-Learning/Autoround-and-Quantization-Methods-Performance-Comparisons/
  // readme.md (commit 4933094d), lists with ls -al the files of three INT4 checkpoints it made of
  // meta-llama/Meta-Llama-3.1-8B-Instruct in fp16, groups of 128: AutoAWQ (GEMM, zero points),
  // optimum's GPTQQuantizer (desc_act false) and AutoRound (sym, GPTQ export). A safetensors file is
  // an 8-byte length, a JSON header (one entry per tensor: name, dtype, shape, data_offsets; padded
  // with spaces to a multiple of 8) and the tensors. The headers below are worked from the
  // checkpoints' tensor names and shapes as safetensors writes them (I32 entries before F16, each
  // group by name; compact JSON with {"format":"pt"} metadata).
  WeightOptions o;
  o.pad_vocab = false;  // 128,256 is a multiple of 64 anyway

  // AWQ: two shards, lm_head alone in the second (transformers' 5 GB shards).
  ModelConfig awq_config = published_config("xinyuwei-david/Meta-Llama-3.1-8B-Instruct-awq-4bit");
  REQUIRE(awq_config.quantization.method == WeightQuantization::Method::awq);
  REQUIRE(awq_config.dtype == DType::fp16);
  WeightList awq = model_weights(awq_config, o);
  const Bytes lm_head = tensors_by_name(awq).at("lm_head.weight").bytes();
  CHECK(Bytes{1'050'673'280} - lm_head == 128);  // model-00002-of-00002.safetensors: its header 128 B
  // model-00001-of-00002.safetensors, 4,677,265,296 B: the other 738 tensors (q, k, v, gate and up
  // apart, their qweight, qzeros and scales adding up to the fused ones) and an 83,856-byte header.
  CHECK(Bytes{4'677'265'296} + 1'050'673'280 - awq.bytes == 83'856 + 128);

  // GPTQ (optimum): qweight, qzeros, scales and g_idx per projection. vLLM fuses q, k, v (and gate,
  // up) into one layer with one g_idx [4096]; the checkpoint keeps each projection's own: three
  // more int32 [4096] per layer.
  ModelConfig gptq_config = published_config("xinyuwei-david/Meta-Llama-3.1-8B-Instruct-gptq-4bit");
  REQUIRE(gptq_config.quantization.method == WeightQuantization::Method::gptq);
  REQUIRE_FALSE(gptq_config.quantization.act_order);
  WeightList gptq = model_weights(gptq_config, o);
  const Bytes split_g_idx = Bytes{32} * 3 * 4096 * 4;
  // Shards of 4,682,270,360 and 1,050,673,280 B: 962 tensors with a 108,184-byte header, and lm_head.
  CHECK(Bytes{4'682'270'360} + 1'050'673'280 - (gptq.bytes + split_g_idx) == 108'184 + 128);

  // AutoRound's GPTQ export, one file of 5,735,720,400 B: the same tensors plus a zero fp16 bias
  // [out] for each of the seven projections (its QuantLinear registers one), which vLLM does not
  // load (llama.py load_weights skips a ".bias" the model has no parameter for); 1,187 tensors,
  // header 132,560 B.
  ModelConfig autoround_config = published_config("xinyuwei-david/AutoRound-GPTQ-sym");
  CHECK(model_weights(autoround_config, o).bytes == gptq.bytes);
  const Bytes biases = Bytes{32} * (4096 + 1024 + 1024 + 4096 + 14336 + 14336 + 4096) * 2;
  CHECK(Bytes{5'735'720'400} - (gptq.bytes + split_g_idx + biases) == 132'560);
}

TEST_CASE("published loaded size: bf16 Meta-Llama-3.1-8B-Instruct in vLLM 0.5.4") {
  // Same readme: vLLM v0.5.4 (benchmark_throughput.py, max_model_len 512, one GPU) logs "Loading
  // model weights took 14.9888 GB" for meta-llama/Meta-Llama-3.1-8B-Instruct (the shapes of
  // Llama-3.1-8B): CudaMemoryProfiler's bytes allocated after loading / 2^30 (utils.py, 4 decimals).
  ModelConfig c = catalogue_model("Llama-3.1-8B");
  WeightList w = model_weights(c);
  Bytes allocated = 0;
  for (const auto& t : w.tensors) allocated += (t.bytes() + 511) / 512 * 512;  // all already whole blocks
  CHECK(allocated == 16'060'522'496);
  // The rotary cos_sin_cache [max_position_embeddings, head_dim] in bf16 (rotary_cache.hpp;
  // rotary_embedding.py Llama3RotaryEmbedding, built for all 131,072 positions whatever
  // max_model_len): 32 MiB.
  const std::vector<RotaryTable> rotary = rotary_tables(c, {});
  REQUIRE(rotary.size() == 1);
  CHECK(rotary[0].bytes() == Bytes{131072} * 128 * 2);
  allocated += rotary[0].bytes();
  const double gib = 1024.0 * 1024.0 * 1024.0;
  CHECK(std::abs(static_cast<double>(allocated) / gib - 14.9888) <= 0.00005);
}

TEST_CASE("published loaded sizes: INT4 AWQ and GPTQ in vLLM, PyTorch's unsplit blocks included") {
  // Same readme (vLLM v0.5.4, one GPU, max_model_len 512, fp16): "Loading model weights took"
  // 5.3748 GB for kaitchup/Meta-Llama-3.1-8B-Instruct-awq-4bit (awq_marlin), 5.3767 GB for
  // kaitchup/Meta-Llama-3.1-8B-Instruct-autoround-gptq-4bit-asym (gptq, the exllama kernel) and
  // 5.3494 GB for …-autoround-gptq-4bit-sym (gptq_marlin): allocated bytes / 2^30, 4 decimals.
  // Made by the readme's recipes, so laid out as the checkpoints above (sym changes no tensor).
  const double gib = 1024.0 * 1024.0 * 1024.0;
  // gptq_marlin.py / awq_marlin.py process_weights_after_loading (v0.5.x): marlin_make_workspace
  // of out/64 × 16 int32 for each of the four fused layers.
  std::vector<Bytes> workspaces;
  for (int l = 0; l < 32; ++l)
    for (Bytes out : {6144, 4096, 28672, 4096}) workspaces.push_back(out / 64 * 16 * 4);
  WeightOptions o;
  o.pad_vocab = false;
  const ModelConfig awq_config = published_config("xinyuwei-david/Meta-Llama-3.1-8B-Instruct-awq-4bit");
  const ModelConfig gptq_config = published_config("xinyuwei-david/Meta-Llama-3.1-8B-Instruct-gptq-4bit");
  WeightList awq = model_weights(awq_config, o);
  WeightList gptq = model_weights(gptq_config, o);
  // The rotary cos_sin_cache [max_position_embeddings, head_dim] in fp16 (rotary_cache.hpp), built
  // after layer 0's o_proj (its last tensor, the scales).
  const std::vector<RotaryTable> rotary = rotary_tables(awq_config, {});
  REQUIRE(rotary.size() == 1);
  REQUIRE(rotary_tables(gptq_config, {}) == rotary);
  CHECK(rotary[0].bytes() == Bytes{131072} * 128 * 2);
  const auto o_proj = std::find_if(awq.tensors.begin(), awq.tensors.end(), [](const WeightTensor& t) {
    return t.name == "model.layers.0.self_attn.o_proj.scales";
  });
  REQUIRE(o_proj != awq.tensors.end());
  CHECK(rotary_load_positions(awq, rotary) == std::vector<std::ptrdiff_t>{o_proj - awq.tensors.begin() + 1});

  // The allocator counts a block's whole size, and does not split a large-pool block when at most
  // 1 MiB would remain (CUDACachingAllocator.cpp should_split, kSmallSize). The 1.75 MiB scales of
  // gate_up_proj share 20 MiB segments with the 8 MiB o_proj qweight (both under 10 MiB,
  // kMinLargeAlloc): where one of them ends a segment it keeps the 0.5 or 1 MiB left over, 8 MiB
  // in all, which bf16 Llama (every tensor a multiple of 2 MiB) does not have.
  const Bytes awq_allocated = allocated_after_loading(awq, rotary, workspaces);
  CHECK(awq_allocated - (awq.bytes + rotary[0].bytes() + 1'376'256) == Bytes{8} << 20);
  CHECK(std::abs(static_cast<double>(awq_allocated) / gib - 5.3748) <= 0.00005);
  // gptq (exllama): the layout as created, g_idx included: the figure leaves no room for having
  // dropped its 3,407,872 B, so in 0.5.4 exllama's shuffle had not run when the profiler read.
  const Bytes exllama_allocated = allocated_after_loading(gptq, rotary, {});
  CHECK(exllama_allocated - (gptq.bytes + rotary[0].bytes()) == Bytes{8} << 20);
  CHECK(std::abs(static_cast<double>(exllama_allocated) / gib - 5.3767) <= 0.00005);
  // gptq_marlin (v0.5.x) creates qzeros on the meta device and, without desc_act, replaces g_idx
  // by an empty tensor after loading: 3,407,872 B of g_idx freed, all in the small pool.
  const Bytes marlin_allocated = allocated_after_loading(gptq, rotary, workspaces, ".qzeros") - 3'407'872;
  CHECK(std::abs(static_cast<double>(marlin_allocated) / gib - 5.3494) <= 0.00005);

  // spottabathula69/gpu-llm-inference-platform, docs/phase-13-quantization.md (commit 3c16613e):
  // casperhansen/llama-3-8b-instruct-awq with --quantization awq --dtype half on an RTX 3060
  // (its deployment file: vllm-openai v0.6.3.post1) logs "Loading model weights took 5.3440 GB".
  // awq.py keeps the layout as created; Llama-3-8B's rotary cache is [8192, 128] fp16, 2 MiB, and
  // falls into those 20 MiB segments too: 7.75 MiB of unsplit blocks.
  const ModelConfig llama3_config = published_config("casperhansen/llama-3-8b-instruct-awq");
  WeightList llama3 = model_weights(llama3_config, o);
  const std::vector<RotaryTable> llama3_rotary = rotary_tables(llama3_config, {});
  REQUIRE(llama3_rotary.size() == 1);
  CHECK(llama3_rotary[0].bytes() == Bytes{8192} * 128 * 2);
  const Bytes llama3_allocated = allocated_after_loading(llama3, llama3_rotary, {});
  CHECK(llama3_allocated - (llama3.bytes + llama3_rotary[0].bytes()) == Bytes{31} << 18);
  CHECK(std::abs(static_cast<double>(llama3_allocated) / gib - 5.3440) <= 0.00005);
}

TEST_CASE("compressed-tensors W4A16 (pack-quantized): weight_packed along the input, group scales, weight_shape") {
  using M = WeightQuantization::Method;
  // llm-compressor's W4A16 preset: INT4, symmetric, groups of 128, bf16 (the settings of
  // RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16, which is stored in the GPTQ format).
  auto w = tensors_by_name(model_weights(llama_8b_as(quantization(M::wna16, 4, 128))));
  CHECK(w.at("model.layers.0.self_attn.qkv_proj.weight_packed").shape == Shape{6144, 4096 / 8});
  CHECK(w.at("model.layers.0.self_attn.qkv_proj.weight_packed").dtype == DType::int32);
  CHECK(w.at("model.layers.0.self_attn.qkv_proj.weight_scale").shape == Shape{6144, 4096 / 128});
  CHECK(w.at("model.layers.0.self_attn.qkv_proj.weight_scale").dtype == DType::bf16);
  CHECK(w.at("model.layers.0.mlp.down_proj.weight_shape").shape == Shape{2});
  CHECK(w.at("model.layers.0.mlp.down_proj.weight_shape").dtype == DType::int64);
  CHECK(w.count("model.layers.0.mlp.down_proj.weight_g_idx") == 0);
  CHECK(parameter_count(llama_8b_as(quantization(M::wna16, 4, 128))) == 8'030'261'248);
  // Worked total: per layer Σ out × in = 218,103,808 values, packed 109,051,904 B, scales
  // 218,103,808 / 128 × 2 = 3,407,872 B, four weight_shape of 16 B; × 32 layers, plus bf16
  // embedding and head 2 × 128,256 × 4,096 × 2 and the norms 266,240 × 2. (The checkpoint stores
  // q, k, v, gate and up apart: seven weight_shape per layer, 1,536 B more in all.) The checkpoint's
  // published total_size (model.safetensors.index.json) was not found in the sources searched
  // (docs, pages, code corpora), so this stays a worked figure.
  CHECK(checkpoint_bytes(llama_8b_as(quantization(M::wna16, 4, 128))) == 5'700'593'664);
  // Channel scales ([out, 1]) and actorder group (a g_idx per input row; scales of a row-parallel
  // layer whole on every rank, marlin_repeat_scales_on_all_ranks).
  auto ch = tensors_by_name(model_weights(llama_8b_as(quantization(M::wna16, 8, 0))));
  CHECK(ch.at("model.layers.0.mlp.down_proj.weight_packed").shape == Shape{4096, 14336 / 4});
  CHECK(ch.at("model.layers.0.mlp.down_proj.weight_scale").shape == Shape{4096, 1});
  WeightQuantization ordered = quantization(M::wna16, 4, 128);
  ordered.act_order = true;
  WeightOptions tp2;
  tp2.tp = 2;
  auto o = tensors_by_name(model_weights(llama_8b_as(ordered), tp2));
  CHECK(o.at("model.layers.0.mlp.down_proj.weight_scale").shape == Shape{4096, 14336 / 128});
  CHECK(o.at("model.layers.0.mlp.down_proj.weight_g_idx").shape == Shape{7168});
  CHECK(o.at("model.layers.0.mlp.gate_up_proj.weight_scale").shape == Shape{14336, 4096 / 128});
  // Experts are not modelled in this format.
  ModelConfig moe = catalogue_model("Qwen3-30B-A3B");
  moe.quantization = quantization(M::wna16, 4, 128);
  CHECK_THROWS_WITH(model_weights(moe), Catch::Contains("compressed-tensors wNa16 experts"));
}

TEST_CASE("published parameter counts: compressed-tensors W4A16, groups of 128, Llama-3.1-8B and Qwen2.5-72B") {
  // The Hub's "Safetensors · Model size" line counts every stored element (packed int32 values as
  // one each), three significant digits: nm-testing/Llama-3.1-8B-gsm8k-quantized.w4a16-noactorder
  // "1.98B params" (BF16 · I64 · I32), neuralmagic-ent/Qwen2.5-72B-Instruct-quantized.w4a16
  // "11.8B params" (BF16 · I64 · I32). The checkpoints store q, k, v, gate and up apart: three
  // weight_shape [2] more per layer than vLLM's fused layers.
  auto stored_elements = [](const ModelConfig& c) {
    WeightOptions o;
    o.pad_vocab = false;
    std::int64_t n = 0;
    for (const auto& t : model_weights(c, o).tensors) n += t.elements();
    return n + std::int64_t{c.layers} * 3 * 2;
  };
  ModelConfig llama = published_config("nm-testing/Llama-3.1-8B-gsm8k-quantized.w4a16-noactorder");
  REQUIRE(llama.quantization.method == WeightQuantization::Method::wna16);
  REQUIRE(llama.quantization.group_size == 128);
  REQUIRE_FALSE(llama.quantization.act_order);
  // 32 layers of 27,262,976 packed int32, 1,703,936 bf16 scales, 14 int64 shape values and 8,192
  // norm values, plus the embedding, head and final norm: 1,977,881,024. Scales per channel
  // would give 1.92B, groups of 64 2.03B.
  CHECK(stored_elements(llama) == 1'977'881'024);
  CHECK(stored_elements(llama) >= 1'975'000'000);
  CHECK(stored_elements(llama) < 1'985'000'000);
  // Qwen2.5-72B: 80 layers with q/k/v biases (bf16), intermediate 29,568 (231 groups of 128).
  ModelConfig qwen = published_config("neuralmagic-ent/Qwen2.5-72B-Instruct-quantized.w4a16");
  REQUIRE(qwen.quantization.method == WeightQuantization::Method::wna16);
  CHECK(stored_elements(qwen) == 11'818'673'248);
  CHECK(stored_elements(qwen) >= 11'750'000'000);
  CHECK(stored_elements(qwen) < 11'850'000'000);
}

TEST_CASE("GPTQ act-order keeps a row-parallel layer's scales whole on every rank") {
  using M = WeightQuantization::Method;
  WeightQuantization q = quantization(M::gptq, 4, 128);
  WeightOptions tp2;
  tp2.tp = 2;
  auto plain = tensors_by_name(model_weights(llama_8b_as(q), tp2));
  CHECK(plain.at("model.layers.0.self_attn.o_proj.scales").shape == Shape{2048 / 128, 4096});
  q.act_order = true;  // gptq_marlin.py marlin_repeat_scales_on_all_ranks
  auto ordered = tensors_by_name(model_weights(llama_8b_as(q), tp2));
  CHECK(ordered.at("model.layers.0.self_attn.o_proj.scales").shape == Shape{4096 / 128, 4096});
  CHECK(ordered.at("model.layers.0.self_attn.qkv_proj.scales").shape == Shape{4096 / 128, 3072});  // column-parallel
}

TEST_CASE("FP8 per-tensor and per-channel scales, NVFP4 blocks") {
  using M = WeightQuantization::Method;
  WeightQuantization t = quantization(M::fp8_tensor);
  t.static_input_scale = true;
  auto ft = tensors_by_name(model_weights(llama_8b_as(t)));
  CHECK(ft.at("model.layers.0.self_attn.qkv_proj.weight").dtype == DType::fp8);
  // One float32 scale per fused logical weight (q, k, v), and one input scale each.
  CHECK(ft.at("model.layers.0.self_attn.qkv_proj.weight_scale").shape == Shape{3});
  CHECK(ft.at("model.layers.0.self_attn.qkv_proj.input_scale").shape == Shape{3});
  CHECK(ft.at("model.layers.0.mlp.gate_up_proj.weight_scale").shape == Shape{2});
  auto fc = tensors_by_name(model_weights(llama_8b_as(quantization(M::fp8_channel))));
  CHECK(fc.at("model.layers.0.self_attn.qkv_proj.weight_scale").shape == Shape{6144, 1});
  CHECK(fc.count("model.layers.0.self_attn.qkv_proj.input_scale") == 0);
  // Worked totals: one byte per linear weight, bf16 embeddings, head and norms, float32 scales.
  CHECK(checkpoint_bytes(llama_8b_as(t)) == 9'081'202'432);
  CHECK(checkpoint_bytes(llama_8b_as(quantization(M::fp8_channel))) == 9'086'705'664);
  // NVFP4 as nvidia's DeepSeek-R1-FP4 checkpoint stores an expert's MLP (hidden 7168, width 2048):
  // down_proj.weight U8 [7168, 1024], weight_scale F8_E4M3 [7168, 128], weight_scale_2 and
  // input_scale F32 scalars (one per logical weight: gate and up fused here give two).
  ModelConfig r1 = catalogue_model("DeepSeek-R1");
  r1.quantization = quantization(M::nvfp4, 0, 16);
  auto n = tensors_by_name(model_weights(r1));
  CHECK(n.at("model.layers.3.mlp.experts.w2_weight").shape == Shape{256, 7168, 1024});
  CHECK(n.at("model.layers.3.mlp.experts.w2_weight").dtype == DType::uint8);
  CHECK(n.at("model.layers.3.mlp.experts.w2_weight_scale").shape == Shape{256, 7168, 128});
  CHECK(n.at("model.layers.3.mlp.experts.w2_weight_scale").dtype == DType::fp8);
  CHECK(n.at("model.layers.3.mlp.experts.w2_weight_scale_2").shape == Shape{256, 1});
  CHECK(n.at("model.layers.3.mlp.experts.w13_weight").shape == Shape{256, 2 * 2048, 7168 / 2});
  CHECK(n.at("model.layers.3.mlp.experts.w13_input_scale").shape == Shape{256, 2});
  CHECK(n.at("model.layers.0.mlp.down_proj.weight").shape == Shape{7168, 18432 / 2});
}

TEST_CASE("a quantized weight that does not divide on a rank is an error naming it") {
  using M = WeightQuantization::Method;
  // GPTQ groups of 1024 on Llama-3.1-8B: down_proj's input 14336 is 7168 per rank at TP 2 (7
  // groups), 3584 at TP 4, not a whole number of groups (vLLM gptq.py: "The input size is not
  // aligned with the quantized weight shape").
  WeightOptions tp;
  tp.tp = 2;
  CHECK_NOTHROW(model_weights(llama_8b_as(quantization(M::gptq, 4, 1024)), tp));
  tp.tp = 4;
  CHECK_THROWS_WITH(model_weights(llama_8b_as(quantization(M::gptq, 4, 1024)), tp),
                    "weight model.layers.0.mlp.down_proj.scales: input 3584 is not divisible by 1024 (gptq; at tensor "
                    "parallel 4)");
}
