#pragma once
// A multi-GPU deployment as one engine forms it: the parallel sizes a scenario gives (tp in
// model.tp, the rest in `parallel:`), the engine's rules for turning them into the groups of one
// rank (the MoE, attention and pipeline groups of vLLM, SGLang, LightLLM), the rank headroom
// simulates (the most loaded one, and why), and the memory outside PyTorch the communicators add
// per rank: NCCL's connection buffers and the custom all-reduce's IPC buffers
// (docs/serving-memory-model.md §9).
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/model/kv_layout.hpp"
#include "sim/model/tensor_parallel.hpp"

namespace headroom::engine {

struct Deployment;

// NCCL src/init.cc: DEFAULT_BUFFSIZE (1 << 22), the Simple protocol's buffer per channel and
// connection (NCCL_BUFFSIZE); DEFAULT_LL_BUFFSIZE = 8 lines × 512 threads × 8 steps × 16 B =
// 512 KiB; DEFAULT_LL128_BUFFSIZE = 120 × 640 threads × 8 steps × 8 B = 4,915,200 B.
inline constexpr Bytes kNcclDefaultBuffsize = 4 * MiB;
inline constexpr Bytes kNcclLlBuffsize = 512 * KiB;
inline constexpr Bytes kNcclLl128Buffsize = 4'915'200;
// NCCL chooses channels by topology; NVIDIA/nccl#892's 8 × H800 NVSwitch log reads "16 coll
// channels, 16 p2p channels": the default, a scenario parameter (parallel.nccl_channels).
inline constexpr int kNcclDefaultChannels = 16;
// A ring connects each rank to the rank before and after it on every channel (NCCL
// src/graph/connect.cc); a communicator of n ranks has min(2, n − 1) distinct peers.
inline constexpr int kNcclDefaultPeers = 2;

// vllm/distributed/device_communicators/custom_all_reduce.py and SGLang's copy: max_size = 8192 ×
// 1024 (2× that on ROCm in SGLang); meta = sizeof(Signal) + max_size and buffer = max_size, each
// cudaMalloc'd (outside PyTorch) and IPC-shared; rank_data = torch.empty(8 MiB). sizeof(Signal) =
// 36 blocks × 8 × 4 B + 2 × 36 × 8 × 4 B = 3,456 B (csrc/custom_all_reduce.cuh, kMaxBlocks 36).
inline constexpr Bytes kCustomAllReduceMaxSize = 8 * MiB;
inline constexpr Bytes kCustomAllReduceSignalBytes = 3456;
inline constexpr Bytes kCustomAllReduceRankData = 8 * MiB;

// The parallel sizes and communicator parameters of a scenario (`parallel:`), tp excepted.
struct Parallelism {
  int pp = 1;                 // pipeline stages
  int dp = 1;                 // data-parallel ranks (SGLang, LightLLM with DP attention: inside tp)
  int ep = 1;                 // expert-parallel ranks
  bool dp_attention = false;  // SGLang --enable-dp-attention
  bool custom_all_reduce = true;  // off: --disable-custom-all-reduce
  Bytes nccl_buffsize = kNcclDefaultBuffsize;
  int nccl_channels = kNcclDefaultChannels;
  int nccl_peers = kNcclDefaultPeers;
  bool operator==(const Parallelism&) const = default;
};

// How an engine forms its groups (EngineTraits::parallel), with the flags that set them.
struct ParallelRules {
  std::string_view pp_flag;            // "" where the engine has no pipeline parallelism
  std::string_view dp_flag;
  std::string_view ep_flag;            // "" where expert parallelism is not modelled
  std::string_view dp_attention_flag;  // "" where there is no such switch
  // vLLM fused_moe/config.py FusedMoEParallelConfig.make: MoE layers shard over all dp × tp ranks
  // (flatten_tp_across_dp); with --enable-expert-parallel the experts do (ep = dp × tp, expert
  // TP 1), else each expert's width does.
  bool moe_over_data_parallel = false;
  // SGLang: --ep-size divides --tp-size; each expert's width splits over tp / ep.
  bool ep_divides_tp = false;
  // LightLLM: --dp is always data-parallel attention inside the TP group.
  bool dp_always_attention = false;
  bool custom_all_reduce = true;  // the engine has a custom all-reduce for its TP group
  Bytes custom_all_reduce_max_size = kCustomAllReduceMaxSize;
};

// The rank headroom simulates and why it stands for the deployment.
struct SimulatedRank {
  model::RankPlacement placement;
  int rank = 0;        // its global rank (pp_rank × tp; tp and dp rank 0)
  std::string why;     // for summary.json and the report
};

// One NCCL communicator a rank belongs to.
struct Communicator {
  std::string group;  // "tp", "pp", "dp", "ep", "attn_tp"
  int ranks = 0;
  Bytes bytes = 0;    // its connection buffers on this rank
};

// What the communicators of one rank hold outside PyTorch (and the custom all-reduce's rank_data
// inside it).
struct CommunicatorMemory {
  std::vector<Communicator> communicators;
  Bytes nccl = 0;                      // all NCCL connection buffers
  Bytes custom_all_reduce = 0;         // the IPC meta and buffer (cudaMalloc, rounded to the granularity)
  Bytes custom_all_reduce_rank_data = 0;  // torch.empty: through the caching allocator
  Bytes outside_torch() const { return nccl + custom_all_reduce; }
};

// NCCL connection buffers of one communicator of `ranks` ranks on one of them: channels ×
// min(peers, ranks − 1) × (buffsize + LL + LL128); 0 for a single rank.
Bytes nccl_communicator_bytes(const Parallelism& p, int ranks);

// Throws EngineConfigError (key "parallel.<field>") for sizes the engine refuses or headroom does
// not model, and InputError for shapes the model cannot be split into.
void check_parallelism(const Deployment& d, const ParallelRules& rules, std::string_view engine);

// The placement of the rank at pipeline stage `pp_rank` and expert-parallel index `ep_rank`.
model::RankPlacement rank_placement(const Deployment& d, const ParallelRules& rules, int pp_rank, int ep_rank);

// The most loaded rank: the pipeline stage (on expert-parallel rank 0, which holds the most
// experts) whose weights leave the fewest KV tokens of the device's capacity, since every engine
// sizes its KV cache by the minimum over ranks (vLLM get_kv_cache_configs, SGLang
// profile_max_num_token, LightLLM profile_size).
SimulatedRank most_loaded_rank(const Deployment& d, const ParallelRules& rules, const model::KvPoolRules& pool,
                               model::KvCacheDtype dtype);

// The communicators of the simulated rank and their buffers.
CommunicatorMemory communicator_memory(const Deployment& d, const ParallelRules& rules);

}  // namespace headroom::engine
