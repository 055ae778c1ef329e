#pragma once
// What a KV cache manager needs to know about one request, and how its tokens are named.
//
// A trace has no token ids, so token identity comes from the prefix hashes (Mooncake hash_ids,
// each naming one block of `prefix_block_tokens` = 512 prompt tokens):
//  - the first hashed_tokens() = min(prompt, hashes × 512) tokens are named by (hash of their
//    512-token block, offset inside it). Mooncake hash_ids are prefix hashes: a hash id always
//    sits at the same block position, after the same parent id, and covers the same number of
//    tokens (checked on every row of both public traces), so requests with equal leading hash ids
//    have equal leading tokens, and only those;
//  - every other token (the prompt past the hashed prefix, every generated token) is unique to
//    the request, named by (request id, position). A request without hashes shares nothing, but
//    still finds its own cached tokens again after a preemption.
// The managers turn these names into their own keys: vLLM full-block hashes (paged_kv_cache.hpp),
// SGLang radix-tree edges (radix_kv_cache.hpp).
#include <cstdint>
#include <limits>
#include <span>

#include "sim/workload/request.hpp"

namespace headroom::engine {

using Tokens = workload::Tokens;
using RequestId = std::uint64_t;  // dense: 0, 1, 2, ... in workload order (workload::Request::id)

struct KvRequest {
  RequestId id = 0;
  Tokens prompt_tokens = 0;
  // Prompt plus the tokens generated so far: vLLM's Request.num_tokens, SGLang's
  // len(origin_input_ids + output_ids).
  Tokens num_tokens = 0;
  // Tokens whose KV the scheduler already counts as computed, not counting a prefix hit that
  // allocate_slots is about to apply (vLLM Request.num_computed_tokens; 0 for a waiting request).
  Tokens num_computed_tokens = 0;
  std::span<const std::uint64_t> prefix_hashes;
  Tokens prefix_block_tokens = 0;  // tokens per hash (512 for Mooncake); 0 when there are none

  // The tokens the prefix hashes name.
  Tokens hashed_tokens() const {
    if (prefix_block_tokens <= 0 || prefix_hashes.empty()) return 0;
    const Tokens covered = static_cast<Tokens>(prefix_hashes.size()) * prefix_block_tokens;
    return covered < prompt_tokens ? covered : prompt_tokens;
  }
};

// A waiting request that has generated nothing yet. The view points into r.prefix_hashes, which
// must outlive it.
inline KvRequest kv_request(const workload::Request& r) {
  KvRequest k;
  k.id = r.id;
  k.prompt_tokens = r.input_tokens;
  k.num_tokens = r.input_tokens;
  k.prefix_hashes = r.prefix_hashes;
  k.prefix_block_tokens = r.prefix_block_tokens;
  return k;
}

// SplitMix64's finaliser (Steele, Lea & Flood, 2014): a bijection on 64 bits that spreads every
// input bit over the output. Not std::hash, whose values differ between standard libraries.
inline std::uint64_t fmix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// An order-dependent combination of two 64-bit names.
inline std::uint64_t mix_hash(std::uint64_t a, std::uint64_t b) {
  return fmix64(a ^ fmix64(b + 0x9e3779b97f4a7c15ULL));
}

// A run of tokens that share one name base: token `position + i` of the request is named
// (base, offset + i) for i < end - position.
struct TokenRun {
  std::uint64_t base = 0;
  Tokens offset = 0;
  Tokens end = 0;  // first position past the run
};

namespace detail {
inline constexpr std::uint64_t kHashedBase = 0x6d6f6f6e63616b65ULL;  // domain tags keep the two kinds apart
inline constexpr std::uint64_t kUniqueBase = 0x756e697175652121ULL;
}  // namespace detail

// Name base of a hashed 512-token block, and of the tokens unique to a request.
inline std::uint64_t hashed_block_base(std::uint64_t hash_id) { return mix_hash(detail::kHashedBase, hash_id); }
inline std::uint64_t unique_base(RequestId id) { return mix_hash(detail::kUniqueBase, id); }

// The run containing `position`: the rest of its 512-token block inside the hashed prefix, or
// every later token (unbounded) past it.
inline TokenRun token_run(const KvRequest& r, Tokens position) {
  const Tokens hashed = r.hashed_tokens();
  if (position < hashed) {
    const Tokens block = position / r.prefix_block_tokens;
    const Tokens block_start = block * r.prefix_block_tokens;
    const Tokens block_end = block_start + r.prefix_block_tokens;
    return {hashed_block_base(r.prefix_hashes[static_cast<std::size_t>(block)]), position - block_start,
            block_end < hashed ? block_end : hashed};
  }
  return {unique_base(r.id), position, std::numeric_limits<Tokens>::max()};
}

}  // namespace headroom::engine
