#include "sim/engine/parallel_ranks.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/device/device.hpp"
#include "sim/engine/deployment.hpp"
#include "sim/model/weights.hpp"

namespace headroom::engine {

namespace {

[[noreturn]] void refuse(std::string_view field, const std::string& message) {
  throw EngineConfigError(fmt::format("parallel.{}", field), message);
}

bool attention_data_parallel(const Deployment& d, const ParallelRules& rules) {
  return d.parallel.dp > 1 && (rules.dp_always_attention || d.parallel.dp_attention);
}

}  // namespace

Bytes nccl_communicator_bytes(const Parallelism& p, int ranks) {
  if (ranks <= 1) return 0;
  const int peers = std::min(p.nccl_peers, ranks - 1);
  return static_cast<Bytes>(p.nccl_channels) * static_cast<Bytes>(peers) *
         (p.nccl_buffsize + kNcclLlBuffsize + kNcclLl128Buffsize);
}

void check_parallelism(const Deployment& d, const ParallelRules& rules, std::string_view engine) {
  const Parallelism& p = d.parallel;
  if (p.pp < 1) refuse("pp", fmt::format("{} pipeline parallel size: expected at least 1, got {}", engine, p.pp));
  if (p.dp < 1) refuse("dp", fmt::format("{} data parallel size: expected at least 1, got {}", engine, p.dp));
  if (p.ep < 1) refuse("ep", fmt::format("{} expert parallel size: expected at least 1, got {}", engine, p.ep));
  if (p.nccl_channels < 1)
    refuse("nccl_channels", fmt::format("NCCL channels: expected at least 1, got {}", p.nccl_channels));
  if (p.nccl_peers < 1) refuse("nccl_peers", fmt::format("NCCL peers per channel: expected at least 1, got {}", p.nccl_peers));
  if (p.pp > 1 && rules.pp_flag.empty())
    refuse("pp", fmt::format("{} has no pipeline parallelism: parallel.pp must be 1, got {}", engine, p.pp));
  if (p.dp_attention && rules.dp_attention_flag.empty())
    refuse("dp_attention",
           fmt::format("{} has no data-parallel attention switch: parallel.dp_attention must be false{}", engine,
                       rules.dp_always_attention ? " (its dp is always data-parallel attention)"
                       : rules.moe_over_data_parallel
                           ? " (its dp ranks run attention apart and share the MoE layers without it)"
                           : ""));
  if (p.dp_attention && p.dp == 1)
    refuse("dp_attention", fmt::format("{} {} needs {} above 1", engine, rules.dp_attention_flag, rules.dp_flag));
  if (attention_data_parallel(d, rules) && d.tp % p.dp != 0)
    // SGLang server_args.py / LightLLM api_start.py: the attention DP ranks live inside the TP group.
    refuse("dp", fmt::format("{} data-parallel attention splits the TP group: {} ({}) must divide the tensor parallel "
                             "size ({})",
                             engine, rules.dp_flag, p.dp, d.tp));
  if (p.ep > 1) {
    if (rules.ep_flag.empty())
      refuse("ep", fmt::format("{}: expert parallelism is not modelled; parallel.ep must be 1, got {}", engine, p.ep));
    if (!d.model.is_moe())
      refuse("ep", fmt::format("{} {}: model '{}' has no experts; parallel.ep must be 1, got {}", engine, rules.ep_flag,
                               d.model.name, p.ep));
    if (rules.moe_over_data_parallel && p.ep != d.tp * p.dp)
      // vLLM FusedMoEParallelConfig.make: use_ep gives ep_size = dp × tp, nothing in between.
      refuse("ep", fmt::format("{} {} spans every data- and tensor-parallel rank: parallel.ep must be 1 or tp × dp = {}, "
                               "got {}",
                               engine, rules.ep_flag, d.tp * p.dp, p.ep));
    if (rules.ep_divides_tp && d.tp % p.ep != 0)
      refuse("ep", fmt::format("{} {} ({}) must divide the tensor parallel size ({})", engine, rules.ep_flag, p.ep, d.tp));
  }
  // TP alone: the model's own InputError, which the scenario names at model.tp.
  model::tensor_parallel_shard(d.model, d.tp);
  // The shapes of every stage must fit the model (heads, widths, experts, layers): the model's own
  // message, named at the parallel size that broke it.
  try {
    for (int s = 0; s < p.pp; ++s) model::rank_shard(d.model, rank_placement(d, rules, s, 0));
  } catch (const EngineConfigError&) {
    throw;
  } catch (const InputError& e) {
    refuse(p.pp > d.model.layers ? "pp" : p.ep > 1 ? "ep" : p.dp > 1 ? "dp" : "pp",
           fmt::format("{} at tp {}, pp {}, dp {}, ep {}: {}", engine, d.tp, p.pp, p.dp, p.ep, e.what()));
  }
}

model::RankPlacement rank_placement(const Deployment& d, const ParallelRules& rules, int pp_rank, int ep_rank) {
  const Parallelism& p = d.parallel;
  model::RankPlacement r = model::RankPlacement::tensor_parallel(d.tp);
  r.pp = p.pp;
  r.pp_rank = pp_rank;
  if (attention_data_parallel(d, rules)) r.attn_tp = d.tp / p.dp;
  const int ep = p.ep;
  r.moe_ep = ep;
  r.ep_rank = ep_rank;
  if (rules.moe_over_data_parallel) {
    // vLLM: the MoE layers see dp × tp ranks; expert parallelism leaves each expert whole.
    r.moe_tp = ep > 1 ? 1 : d.tp * p.dp;
  } else {
    // SGLang: moe_tp_size = tp_size / ep_size.
    r.moe_tp = d.tp / ep;
  }
  return r;
}

SimulatedRank most_loaded_rank(const Deployment& d, const ParallelRules& rules, const model::KvPoolRules& pool,
                               model::KvCacheDtype dtype) {
  const Parallelism& p = d.parallel;
  SimulatedRank best;
  double best_tokens = 0;
  Bytes best_weights = 0;
  for (int s = 0; s < p.pp; ++s) {
    const model::RankPlacement placement = rank_placement(d, rules, s, 0);
    model::WeightOptions options;
    options.placement = placement;
    const Bytes weights = model::model_weights(d.model, options).bytes;
    const model::KvLayout kv = model::kv_layout(d.model, pool, dtype, placement);
    const double left = static_cast<double>(d.total()) - static_cast<double>(weights);
    const double tokens = left / static_cast<double>(kv.bytes_per_token);
    if (s == 0 || tokens < best_tokens) {
      best_tokens = tokens;
      best_weights = weights;
      best.placement = placement;
      best.rank = s * d.tp;
    }
  }
  const model::TensorParallelShard shard = model::rank_shard(d.model, best.placement);
  std::string why;
  if (p.pp > 1)
    why = fmt::format("pipeline stage {} of {} (layers {}-{}{}{}) holds {} of weights and leaves the fewest KV tokens "
                      "of the {} device; the engines size the KV cache by the minimum over ranks",
                      best.placement.pp_rank, p.pp, shard.first_layer, shard.end_layer - 1,
                      shard.has_embedding ? ", the embedding" : "", shard.has_lm_head ? ", the final norm and lm_head" : "",
                      format_bytes(best_weights), format_bytes(d.total()));
  if (best.placement.moe_ep > 1) {
    const int ep = best.placement.moe_ep;
    const std::string experts =
        d.model.experts % ep == 0
            ? fmt::format("each expert-parallel rank holds {} of {} experts", shard.local_experts, d.model.experts)
            : fmt::format("expert-parallel rank 0 holds {} of {} experts (determine_expert_map gives one more to the "
                          "first {} % {} ranks)",
                          shard.local_experts, d.model.experts, d.model.experts, ep);
    why = why.empty() ? experts : why + "; " + experts;
  }
  if (why.empty()) why = "every rank holds the same shapes; rank 0 stands for all";
  best.why = std::move(why);
  return best;
}

CommunicatorMemory communicator_memory(const Deployment& d, const ParallelRules& rules) {
  const Parallelism& p = d.parallel;
  CommunicatorMemory m;
  auto add = [&](std::string group, int ranks) {
    if (ranks <= 1) return;
    const Bytes bytes = nccl_communicator_bytes(p, ranks);
    m.communicators.push_back({std::move(group), ranks, bytes});
    m.nccl += bytes;
  };
  // One NCCL communicator per group of more than one rank (vLLM parallel_state.py GroupCoordinator
  // with its PyNcclCommunicator; SGLang and LightLLM likewise).
  add("tp", d.tp);
  add("pp", p.pp);
  if (attention_data_parallel(d, rules)) {
    add("attn_tp", d.tp / p.dp);  // SGLang dp_attention.py: the attention TP group inside tp
  } else if (rules.moe_over_data_parallel && d.model.is_moe()) {
    add("dp", p.dp);  // vLLM: the DP group gathers the MoE layers' tokens
  }
  // The expert-parallel group, where its ranks differ from the TP group's (vLLM with dp > 1).
  if (p.ep > 1 && p.ep != d.tp) add("ep", p.ep);
  // custom_all_reduce.py: _SUPPORTED_WORLD_SIZES = [2, 4, 6, 8], for the TP group only; more than
  // two GPUs that are not fully connected (PCIe only) get none ("not supported on more than two
  // PCIe-only GPUs"). A profile without an interconnect is taken to be fully connected.
  const bool supported = d.tp == 2 || d.tp == 4 || d.tp == 6 || d.tp == 8;
  const bool connected = d.tp == 2 || !d.gpu.interconnect || d.gpu.interconnect->fully_connected(d.tp);
  if (rules.custom_all_reduce && p.custom_all_reduce && supported && connected) {
    const Bytes granularity = device::device_spec(d.gpu).granularity;
    m.custom_all_reduce = round_up(kCustomAllReduceSignalBytes + rules.custom_all_reduce_max_size, granularity) +
                          round_up(rules.custom_all_reduce_max_size, granularity);
    m.custom_all_reduce_rank_data = kCustomAllReduceRankData;
  }
  return m;
}

}  // namespace headroom::engine
