#include "sim/engine/paged_kv_cache.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/core/error.hpp"

namespace headroom::engine {

namespace {

// Parent hash of block 0 (vLLM seeds its chain with NONE_HASH).
constexpr std::uint64_t kRootHash = 0x766c6c6d5f726f6fULL;

[[noreturn]] void broken(const std::string& what) { throw std::logic_error("PagedKvCache: " + what); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Hash index

PagedKvCache::HashIndex::HashIndex(std::uint32_t max_entries) {
  std::size_t capacity = 16;
  while (capacity < 2 * static_cast<std::size_t>(max_entries)) capacity *= 2;  // load factor <= 1/2
  keys_.assign(capacity, 0);
  heads_.assign(capacity, kNone);
  mask_ = capacity - 1;
}

PagedKvCache::BlockId PagedKvCache::HashIndex::find(std::uint64_t hash) const {
  const std::uint64_t key = fmix64(hash);
  for (std::size_t i = key & mask_;; i = (i + 1) & mask_) {
    if (heads_[i] == kNone) return kNone;
    if (keys_[i] == key) return heads_[i];
  }
}

void PagedKvCache::HashIndex::set(std::uint64_t hash, BlockId head) {
  hash = fmix64(hash);
  for (std::size_t i = hash & mask_;; i = (i + 1) & mask_) {
    if (heads_[i] == kNone) {
      keys_[i] = hash;
      heads_[i] = head;
      ++size_;
      return;
    }
    if (keys_[i] == hash) {
      heads_[i] = head;
      return;
    }
  }
}

void PagedKvCache::HashIndex::erase(std::uint64_t hash) {
  hash = fmix64(hash);
  std::size_t i = hash & mask_;
  while (true) {
    if (heads_[i] == kNone) return;
    if (keys_[i] == hash) break;
    i = (i + 1) & mask_;
  }
  // Backward-shift deletion: pull later entries of the probe run into the hole when their home
  // slot does not lie cyclically in (hole, j].
  std::size_t hole = i;
  for (std::size_t j = (i + 1) & mask_; heads_[j] != kNone; j = (j + 1) & mask_) {
    const std::size_t home = keys_[j] & mask_;
    const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays) continue;
    keys_[hole] = keys_[j];
    heads_[hole] = heads_[j];
    hole = j;
  }
  heads_[hole] = kNone;
  --size_;
}

// ---------------------------------------------------------------------------------------------

PagedKvCache::PagedKvCache(std::uint32_t num_blocks, Tokens block_size, bool enable_caching,
                           std::vector<Tokens> group_windows, bool chunked_local)
    : num_blocks_(num_blocks),
      block_size_(block_size),
      caching_(enable_caching),
      windows_(std::move(group_windows)),
      chunked_(chunked_local),
      index_(num_blocks) {
  if (num_blocks < 2)
    throw InputError("vLLM KV cache: num_blocks must be at least 2 (block 0 is the null block), got " +
                     std::to_string(num_blocks));
  if (block_size < 1) throw InputError("vLLM KV cache: block_size must be at least 1, got " + std::to_string(block_size));
  if (windows_.empty()) throw InputError("vLLM KV cache: at least one KV cache group is needed");
  for (Tokens w : windows_) {
    if (w < 0) throw InputError("vLLM KV cache: a sliding window must be positive, got " + std::to_string(w));
    if (w == 0) any_full_ = true;
    else if (sliding_window_ != 0 && w != sliding_window_)
      throw InputError("vLLM KV cache: the sliding-window groups must share one window (vLLM's coordinator "
                       "takes full attention plus one other kind)");
    else sliding_window_ = w;
  }
  ref_.assign(num_blocks, 0);
  hashed_.assign(num_blocks, 0);
  hash_.assign(num_blocks, 0);
  same_next_.assign(num_blocks, 0);
  same_prev_.assign(num_blocks, 0);
  next_.assign(num_blocks + 1, 0);
  prev_.assign(num_blocks + 1, 0);
  const BlockId sentinel = num_blocks_;
  next_[sentinel] = prev_[sentinel] = sentinel;
  // Every block but the null block starts free, in id order (BlockPool pops block 0 first).
  for (BlockId b = 1; b < num_blocks_; ++b) queue_push_back(b);
  pending_blocks_.resize(windows_.size());
  for (auto& p : pending_blocks_) p.reserve(64);
  chain_.reserve(64);
}

double PagedKvCache::usage() const {
  return 1.0 - static_cast<double>(free_count_) / static_cast<double>(num_blocks_ - 1);
}

std::uint64_t PagedKvCache::block_hash(BlockNames& names, std::uint64_t parent, Tokens index) const {
  const TokenRun last = names.at((index + 1) * block_size_ - 1);
  return mix_hash(parent, mix_hash(last.base, static_cast<std::uint64_t>(last.offset)));
}

// ---------------------------------------------------------------------------------------------
// Free queue

void PagedKvCache::queue_push_back(BlockId b) {
  const BlockId sentinel = num_blocks_;
  const BlockId tail = prev_[sentinel];
  next_[tail] = b;
  prev_[b] = tail;
  next_[b] = sentinel;
  prev_[sentinel] = b;
  ++free_count_;
  cached_free_ += hashed_[b];
}

void PagedKvCache::queue_remove(BlockId b) {
  next_[prev_[b]] = next_[b];
  prev_[next_[b]] = prev_[b];
  --free_count_;
  cached_free_ -= hashed_[b];
}

PagedKvCache::BlockId PagedKvCache::queue_pop_front() {
  const BlockId b = next_[num_blocks_];
  queue_remove(b);
  return b;
}

std::vector<PagedKvCache::BlockId> PagedKvCache::free_queue() const {
  std::vector<BlockId> out;
  out.reserve(free_count_);
  for (BlockId b = next_[num_blocks_]; b != num_blocks_; b = next_[b]) out.push_back(b);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Cache map

void PagedKvCache::cache_block(BlockId b, std::uint64_t hash) {
  hashed_[b] = 1;
  hash_[b] = hash;
  ++hashed_count_;
  const BlockId head = index_.find(hash);
  if (head == HashIndex::kNone) {
    same_next_[b] = same_prev_[b] = b;
    index_.set(hash, b);
    return;
  }
  // Appended after the newest: lookups keep returning the oldest (vLLM returns the first block
  // of the hash's dict, in insertion order).
  const BlockId tail = same_prev_[head];
  same_next_[tail] = b;
  same_prev_[b] = tail;
  same_next_[b] = head;
  same_prev_[head] = b;
}

void PagedKvCache::uncache_block(BlockId b) {
  const std::uint64_t hash = hash_[b];
  if (same_next_[b] == b) {
    index_.erase(hash);  // the hash's only block
  } else {
    same_next_[same_prev_[b]] = same_next_[b];
    same_prev_[same_next_[b]] = same_prev_[b];
    if (index_.find(hash) == b) index_.set(hash, same_next_[b]);
  }
  hashed_[b] = 0;
  hash_[b] = 0;
  --hashed_count_;
}

// ---------------------------------------------------------------------------------------------
// Requests

PagedKvCache::RequestState& PagedKvCache::new_state(RequestId id) {
  if (state_index_.dropped(id)) broken("request " + std::to_string(id) + " was released and cannot hold blocks again");
  state_index_.extend_to(id);
  std::size_t i;
  if (!spare_states_.empty()) {
    i = spare_states_.back();
    spare_states_.pop_back();
  } else {
    i = states_.size();
    states_.emplace_back();
    states_.back().tables.resize(windows_.size());
  }
  state_index_[id] = static_cast<std::int64_t>(i);
  RequestState& s = states_[i];
  s.id = id;
  for (auto& table : s.tables) {
    table.clear();
    if (table.capacity() < longest_table_) table.reserve(longest_table_);
  }
  s.num_hashed = 0;
  s.last_hash = kRootHash;
  ++live_requests_;
  return s;
}

std::span<const PagedKvCache::BlockId> PagedKvCache::block_table(RequestId id, std::size_t group) const {
  const RequestState* s = state_of(id);
  if (!s || group >= s->tables.size()) return {};
  return s->tables[group];
}

std::size_t PagedKvCache::blocks_held(RequestId id) const {
  const RequestState* s = state_of(id);
  if (!s) return 0;
  std::size_t n = 0;
  for (const auto& table : s->tables)
    for (BlockId b : table) n += b != kNullBlock;
  return n;
}

std::size_t PagedKvCache::skipped_blocks(std::size_t group, Tokens computed) const {
  // SlidingWindowManager.get_num_skipped_tokens: max(0, computed − window + 1); full attention none;
  // ChunkedLocalAttentionManager.get_num_skipped_tokens: floor(computed / chunk) × chunk.
  if (!sliding(group)) return 0;
  const Tokens skipped = chunked_ ? computed / windows_[group] * windows_[group] : computed - windows_[group] + 1;
  return skipped > 0 ? static_cast<std::size_t>(skipped / block_size_) : 0;
}

void PagedKvCache::remove_skipped_blocks(RequestState& s, Tokens computed) {
  // SingleTypeKVCacheManager.remove_skipped_blocks: back from the last skipped block to the first
  // null one, each replaced by the null block and freed in that order.
  for (std::size_t g = 0; g < windows_.size(); ++g) {
    std::vector<BlockId>& table = s.tables[g];
    const std::size_t n = std::min(skipped_blocks(g, computed), table.size());
    for (std::size_t i = n; i-- > 0;) {
      const BlockId b = table[i];
      if (b == kNullBlock) break;
      table[i] = kNullBlock;
      if (--ref_[b] == 0) queue_push_back(b);
    }
  }
}

std::size_t PagedKvCache::full_attention_hit(const KvRequest& req, std::size_t max_blocks) {
  // FullAttentionManager.find_longest_cache_hit over the full-attention groups: a chain, so the
  // first block missing from any group ends the hit.
  std::uint64_t parent = kRootHash;
  BlockNames names(req);
  for (std::size_t i = 0; i < max_blocks; ++i) {
    const std::uint64_t h = block_hash(names, parent, static_cast<Tokens>(i));
    if (any_full_) {
      bool all = true;
      for (std::size_t g = 0; g < windows_.size() && all; ++g)
        if (!sliding(g)) all = index_.find(group_key(h, g)) != HashIndex::kNone;
      if (!all) break;
      for (std::size_t g = 0; g < windows_.size(); ++g)
        if (!sliding(g)) pending_blocks_[g].push_back(index_.find(group_key(h, g)));
    }
    chain_.push_back(h);
    parent = h;
  }
  return chain_.size();
}

std::size_t PagedKvCache::sliding_window_hit(std::size_t max_blocks) {
  // SlidingWindowManager.find_longest_cache_hit: from the right, the first run of
  // cdiv(window − 1, block) blocks cached in every sliding group ends the hit; without one, the
  // run from block 0 is the hit. Blocks before the run are the null block.
  const auto needed = static_cast<std::size_t>((sliding_window_ - 1 + block_size_ - 1) / block_size_);
  std::size_t run = 0, start = 0;
  bool found = false;
  for (std::size_t i = max_blocks; i-- > 0;) {
    bool all = true;
    for (std::size_t g = 0; g < windows_.size() && all; ++g)
      if (sliding(g)) all = index_.find(group_key(chain_[i], g)) != HashIndex::kNone;
    if (!all) {
      run = 0;
      continue;
    }
    ++run;
    if (run >= needed) {
      start = i;
      found = true;
      break;
    }
  }
  const std::size_t hit = found ? start + run : run;
  for (std::size_t g = 0; g < windows_.size(); ++g) {
    if (!sliding(g)) continue;
    for (std::size_t i = 0; i < hit; ++i)
      pending_blocks_[g].push_back(i < start ? kNullBlock : index_.find(group_key(chain_[i], g)));
  }
  return hit;
}

std::size_t PagedKvCache::chunked_local_hit(std::size_t max_blocks) {
  // ChunkedLocalAttentionManager.find_longest_cache_hit with max_length = max_blocks × block: the
  // blocks before the chunk max_length lies in are hits without a lookup (null blocks); from that
  // chunk's start, the blocks cached in every chunked group in a row.
  const Tokens max_length = static_cast<Tokens>(max_blocks) * block_size_;
  const auto start = static_cast<std::size_t>(max_length / sliding_window_ * sliding_window_ / block_size_);
  std::size_t hit = start;
  for (std::size_t i = start; i < max_blocks; ++i) {
    bool all = true;
    for (std::size_t g = 0; g < windows_.size() && all; ++g)
      if (sliding(g)) all = index_.find(group_key(chain_[i], g)) != HashIndex::kNone;
    if (!all) break;
    hit = i + 1;
  }
  for (std::size_t g = 0; g < windows_.size(); ++g) {
    if (!sliding(g)) continue;
    for (std::size_t i = 0; i < hit; ++i)
      pending_blocks_[g].push_back(i < start ? kNullBlock : index_.find(group_key(chain_[i], g)));
  }
  return hit;
}

Tokens PagedKvCache::find_cached_prefix(const KvRequest& req) {
  if (const RequestState* s = state_of(req.id); s && !s->tables[0].empty())
    throw std::logic_error("PagedKvCache: request " + std::to_string(req.id) +
                           " already holds blocks; vLLM looks up the prefix cache only for waiting requests");
  ++counters_.lookups;
  counters_.query_tokens += static_cast<std::uint64_t>(req.num_tokens);
  pending_valid_ = true;
  pending_id_ = req.id;
  for (auto& p : pending_blocks_) p.clear();
  pending_hit_ = 0;
  pending_last_hash_ = kRootHash;
  chain_.clear();
  if (!caching_ || req.num_tokens < 1) return 0;
  // max_cache_hit_length = num_tokens − 1 (kv_cache_manager.py get_computed_blocks); whole
  // blocks only (max_length // block_size).
  const auto max_blocks = static_cast<std::size_t>((req.num_tokens - 1) / block_size_);
  std::size_t hit = full_attention_hit(req, max_blocks);
  if (sliding_window_ > 0) {
    // Within the full-attention hit; the full-attention hit is then cut to the sliding one.
    hit = chunked_ ? chunked_local_hit(hit) : sliding_window_hit(hit);
    for (std::size_t g = 0; g < windows_.size(); ++g)
      if (!sliding(g)) pending_blocks_[g].resize(hit);
  }
  pending_hit_ = hit;
  pending_last_hash_ = hit > 0 ? chain_[hit - 1] : kRootHash;
  const Tokens hit_tokens = static_cast<Tokens>(hit) * block_size_;
  counters_.hit_tokens += static_cast<std::uint64_t>(hit_tokens);
  return hit_tokens;
}

bool PagedKvCache::allocate_new_slots(const KvRequest& req, Tokens num_new_tokens, Tokens num_lookahead_tokens) {
  if (num_new_tokens < 1)
    throw std::logic_error("PagedKvCache: allocate_slots needs num_new_tokens >= 1, got " +
                           std::to_string(num_new_tokens));
  if (num_lookahead_tokens < 0 || req.num_computed_tokens < 0)
    throw std::logic_error("PagedKvCache: negative token count in allocate_slots");
  RequestState* s = state_of(req.id);
  const std::size_t held = s ? s->tables[0].size() : 0;  // table length, null blocks included
  const bool use_hit = pending_valid_ && pending_id_ == req.id && held == 0;
  pending_valid_ = false;  // a hit is good for this call only
  const std::size_t hits = use_hit ? pending_hit_ : 0;

  const Tokens computed = req.num_computed_tokens + static_cast<Tokens>(hits) * block_size_;
  // Blocks that left the window are freed first, even if the allocation then fails
  // (KVCacheManager.allocate_slots: coordinator.remove_skipped_blocks).
  if (s && sliding_window_ > 0) remove_skipped_blocks(*s, computed);
  const Tokens need = computed + num_new_tokens + num_lookahead_tokens;
  const std::size_t required = static_cast<std::size_t>((need + block_size_ - 1) / block_size_);
  const std::size_t have = held + hits;
  const std::size_t new_per_group = required > have ? required - have : 0;
  // A hit block nobody references leaves the free queue when touched, so it counts as an
  // allocation (single_type_kv_cache_manager.py get_num_blocks_to_allocate); hits the window has
  // already left are not touched.
  std::size_t evictable_hits = 0;
  for (std::size_t g = 0; g < windows_.size() && hits > 0; ++g)
    for (std::size_t k = skipped_blocks(g, computed); k < hits; ++k) {
      const BlockId b = pending_blocks_[g][k];
      evictable_hits += b != kNullBlock && ref_[b] == 0;
    }
  const std::size_t new_blocks = new_per_group * windows_.size();
  if (new_blocks + evictable_hits > free_count_) {
    ++counters_.failed_allocations;
    return false;
  }

  if (!s) s = &new_state(req.id);
  // Touch the hit blocks first (BlockPool.touch), so the new blocks below cannot evict them; a
  // sliding group pads the blocks before its window with the null block
  // (allocate_new_computed_blocks).
  if (hits > 0) {
    for (std::size_t g = 0; g < windows_.size(); ++g) {
      const std::size_t skipped = std::min(skipped_blocks(g, computed), hits);
      for (std::size_t k = 0; k < hits; ++k) {
        const BlockId b = k < skipped ? kNullBlock : pending_blocks_[g][k];
        if (b != kNullBlock) {
          if (ref_[b] == 0) queue_remove(b);
          ++ref_[b];
        }
        s->tables[g].push_back(b);
      }
    }
    s->num_hashed = static_cast<std::uint32_t>(hits);
    s->last_hash = pending_last_hash_;
  }
  // New blocks from the queue head, group by group; a cached one loses its hash
  // (BlockPool.get_new_blocks, _maybe_evict_cached_block).
  for (std::size_t g = 0; g < windows_.size(); ++g)
    for (std::size_t k = 0; k < new_per_group; ++k) {
      const BlockId b = queue_pop_front();
      if (hashed_[b]) {
        uncache_block(b);
        ++counters_.evictions;
      }
      ref_[b] = 1;
      s->tables[g].push_back(b);
    }
  counters_.allocated_blocks += new_blocks;
  longest_table_ = std::max(longest_table_, s->tables[0].size());

  // Hash the blocks that are now full (KVCacheManager.allocate_slots: num_tokens_to_cache =
  // min(total computed + new, request.num_tokens); BlockPool.cache_full_blocks, which skips null
  // blocks).
  if (caching_) {
    const Tokens to_cache = std::min(computed + num_new_tokens, req.num_tokens);
    const std::size_t full = static_cast<std::size_t>(to_cache / block_size_);
    BlockNames names(req);
    for (std::size_t i = s->num_hashed; i < full; ++i) {
      const std::uint64_t h = block_hash(names, s->last_hash, static_cast<Tokens>(i));
      for (std::size_t g = 0; g < windows_.size(); ++g)
        if (s->tables[g][i] != kNullBlock) cache_block(s->tables[g][i], group_key(h, g));
      s->last_hash = h;
    }
    if (full > s->num_hashed) s->num_hashed = static_cast<std::uint32_t>(full);
  }
  return true;
}

bool PagedKvCache::free(RequestId id) {
  RequestState* s = state_of(id);
  if (!s) return false;
  // Group by group, each in reverse order: the tail blocks reach the queue first and so are
  // evicted first (KVCacheCoordinator.free, SingleTypeKVCacheManager.free).
  for (auto& table : s->tables) {
    for (auto it = table.rbegin(); it != table.rend(); ++it) {
      const BlockId b = *it;
      if (b != kNullBlock && --ref_[b] == 0) queue_push_back(b);
    }
    table.clear();
  }
  spare_states_.push_back(static_cast<std::uint32_t>(state_index_[id]));
  state_index_[id] = -1;
  --live_requests_;
  return true;
}

void PagedKvCache::release(RequestId id) {
  if (state_of(id)) broken("request " + std::to_string(id) + " released while holding blocks");
  state_index_.drop(id);
}

// ---------------------------------------------------------------------------------------------

void PagedKvCache::check_invariants() const {
  // Reference counts against the tables.
  std::vector<std::uint32_t> holders(num_blocks_, 0);
  std::uint32_t live = 0;
  for (std::uint64_t id = state_index_.begin_id(); id < state_index_.end_id(); ++id) {
    if (state_index_.dropped(id) || state_index_[id] < 0) continue;
    ++live;
    const RequestState& s = states_[static_cast<std::size_t>(state_index_[id])];
    if (s.id != id) broken("request slot of " + std::to_string(id) + " holds request " + std::to_string(s.id));
    if (s.tables.size() != windows_.size()) broken("request " + std::to_string(id) + " has a table per group missing");
    if (s.tables[0].empty()) broken("request " + std::to_string(id) + " is tracked but holds no blocks");
    if (s.num_hashed > s.tables[0].size())
      broken("request " + std::to_string(id) + " has more hashed blocks than blocks");
    for (std::size_t g = 0; g < s.tables.size(); ++g) {
      const std::vector<BlockId>& table = s.tables[g];
      if (table.size() != s.tables[0].size())
        broken("request " + std::to_string(id) + " has block tables of different lengths");
      bool real_seen = false;
      for (std::size_t i = 0; i < table.size(); ++i) {
        const BlockId b = table[i];
        if (b == kNullBlock) {
          // Only a sliding window leaves null blocks, and only before its first real block.
          if (!sliding(g) || real_seen)
            broken("request " + std::to_string(id) + " has the null block inside its table of group " + std::to_string(g));
          continue;
        }
        real_seen = true;
        if (b >= num_blocks_) broken("request " + std::to_string(id) + " holds invalid block " + std::to_string(b));
        ++holders[b];
        if (i < s.num_hashed && !hashed_[b])
          broken("block " + std::to_string(b) + " of request " + std::to_string(id) + " should carry a hash");
      }
      if (s.num_hashed > 0 && table[s.num_hashed - 1] != kNullBlock &&
          hash_[table[s.num_hashed - 1]] != group_key(s.last_hash, g))
        broken("request " + std::to_string(id) + " lost its hash chain");
    }
  }
  if (live != live_requests_) broken("live request count is off");
  for (BlockId b = 0; b < num_blocks_; ++b)
    if (ref_[b] != holders[b])
      broken("block " + std::to_string(b) + " has ref count " + std::to_string(ref_[b]) + " but " +
             std::to_string(holders[b]) + " tables hold it");

  // The free queue is exactly the unreferenced blocks.
  std::vector<std::uint8_t> queued(num_blocks_, 0);
  std::uint32_t n = 0;
  const BlockId sentinel = num_blocks_;
  for (BlockId b = next_[sentinel], before = sentinel; b != sentinel; before = b, b = next_[b]) {
    if (b == kNullBlock || b >= num_blocks_) broken("free queue holds invalid block " + std::to_string(b));
    if (prev_[b] != before) broken("free queue links broken at block " + std::to_string(b));
    if (queued[b]) broken("block " + std::to_string(b) + " is twice in the free queue");
    if (ref_[b] != 0) broken("block " + std::to_string(b) + " is in the free queue with references");
    queued[b] = 1;
    if (++n > num_blocks_) broken("free queue loops");
  }
  if (n != free_count_) broken("free count " + std::to_string(free_count_) + " but queue holds " + std::to_string(n));
  std::uint32_t cached_free = 0;
  for (BlockId b = 1; b < num_blocks_; ++b) cached_free += queued[b] && hashed_[b];
  if (cached_free != cached_free_) broken("cached free count is off");
  for (BlockId b = 1; b < num_blocks_; ++b)
    if (ref_[b] == 0 && !queued[b]) broken("unreferenced block " + std::to_string(b) + " missing from the free queue");
  if (ref_[kNullBlock] != 0 || hashed_[kNullBlock]) broken("the null block was used");

  // The cache map.
  std::uint32_t indexed = 0, hashed = 0;
  index_.for_each([&](std::uint64_t key, BlockId head) {
    BlockId b = head;
    do {
      if (b >= num_blocks_ || !hashed_[b] || fmix64(hash_[b]) != key)
        broken("cache map entry leads to block " + std::to_string(b) + " without its hash");
      if (same_prev_[same_next_[b]] != b) broken("same-hash links broken at block " + std::to_string(b));
      ++indexed;
      if (indexed > num_blocks_) broken("same-hash list loops");
      b = same_next_[b];
    } while (b != head);
  });
  for (BlockId b = 0; b < num_blocks_; ++b) hashed += hashed_[b];
  if (indexed != hashed || hashed != hashed_count_)
    broken(std::to_string(hashed) + " hashed blocks but " + std::to_string(indexed) + " indexed");
  if (!caching_ && hashed != 0) broken("hashes with prefix caching off");
}

}  // namespace headroom::engine
