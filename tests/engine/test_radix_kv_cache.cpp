// SGLang's token pool and radix cache (sim/engine/radix_kv_cache.hpp) and its SWA variant
// (swa_radix_kv_cache.hpp): known answers for the rules of docs/serving-memory-model.md §2.2/§2.4,
// random comparisons with plain pointer-and-std::map trees following the same rules, and steady
// states that allocate nothing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"
#include "sim/engine/radix_kv_cache.hpp"
#include "sim/engine/swa_radix_kv_cache.hpp"
#include "tests/support/allocation_counter.hpp"
#include "tests/support/sanitizers.hpp"


using namespace headroom;
using namespace headroom::engine;
using NodeId = RadixKvCache::NodeId;

namespace {

struct Req {
  std::vector<std::uint64_t> hashes;
  KvRequest kv;
  Req(RequestId id, Tokens prompt, std::vector<std::uint64_t> h = {}, Tokens block_tokens = 8) : hashes(std::move(h)) {
    kv.id = id;
    kv.prompt_tokens = prompt;
    kv.num_tokens = prompt;
    kv.prefix_hashes = hashes;
    kv.prefix_block_tokens = hashes.empty() ? 0 : block_tokens;
  }
  Req(const Req& o) : hashes(o.hashes), kv(o.kv) { kv.prefix_hashes = hashes; }
  Req& operator=(const Req& o) {
    hashes = o.hashes;
    kv = o.kv;
    kv.prefix_hashes = hashes;
    return *this;
  }
};

// A request that prefills privately (nothing matched) and is cached whole when it finishes.
RadixKvCache::Insertion prefill_and_finish(RadixKvCache& c, const Req& r) {
  REQUIRE(c.alloc(r.kv.num_tokens));
  return c.insert(r.kv, r.kv.num_tokens, 0);
}


// One of the walk's live requests that is (or is not) running, drawn uniformly in id order; end()
// when there is none.
template <class Live>
typename std::map<RequestId, Live>::iterator pick_live(std::map<RequestId, Live>& live, Rng& rng, bool running) {
  std::vector<RequestId> ids;
  for (const auto& [id, l] : live)
    if (l.running == running) ids.push_back(id);
  if (ids.empty()) return live.end();
  return live.find(ids[rng.uniform_int(0, ids.size() - 1)]);
}

}  // namespace

TEST_CASE("radix: the pool counts slots, slot 0 is the dummy") {
  CHECK_THROWS_WITH(RadixKvCache(0), "SGLang KV pool: size must be at least 1 token, got 0");
  CHECK_THROWS_AS(RadixKvCache(-5), InputError);
  RadixKvCache c(100);
  CHECK(c.tensor_rows() == 101);
  CHECK(c.available_size() == 100);
  REQUIRE(c.alloc(60));
  CHECK_FALSE(c.alloc(50));  // TokenToKVPoolAllocator.alloc returns None
  CHECK(c.available_size() == 40);
  CHECK(c.request_tokens() == 60);
  CHECK(c.counters().failed_allocations == 1);
  c.free(60);
  CHECK(c.available_size() == 100);
  CHECK_THROWS_WITH(c.free(1), "RadixKvCache: free of 1 tokens but requests hold 0 outside the tree (double free?)");
  c.check_invariants();
}

TEST_CASE("radix: match, insert, duplicates and splits") {
  RadixKvCache c(1000);
  Req a(0, 20, {1, 2, 3});  // blocks of 8, 8 and 4 tokens
  const auto m0 = c.match_prefix(a.kv);
  CHECK(m0.tokens == 0);
  CHECK(m0.node == RadixKvCache::kRoot);
  REQUIRE(c.alloc(20));
  for (int i = 0; i < 5; ++i) {  // 5 generated tokens
    REQUIRE(c.alloc(1));
    ++a.kv.num_tokens;
  }
  const auto ia = c.insert(a.kv, 25, 0);  // cache_finished_req
  CHECK(ia.prefix_len == 0);
  CHECK(c.num_nodes() == 4);  // 8 | 8 | 4 | 5 generated tokens
  CHECK(c.node_tokens(ia.node) == 5);
  CHECK(c.cached_tokens() == 25);
  CHECK(c.evictable_size() == 25);
  CHECK(c.request_tokens() == 0);
  CHECK(c.available_size() == 975);

  Req b(1, 24, {1, 2, 7});
  const auto mb = c.match_prefix(b.kv);  // key: the first 23 tokens
  CHECK(mb.tokens == 16);
  CHECK(c.node_tokens(mb.node) == 8);
  c.inc_lock_ref(mb.node);
  CHECK(c.protected_size() == 16);
  CHECK(c.evictable_size() == 9);
  REQUIRE(c.alloc(8));
  const auto ib = c.insert(b.kv, 24, 16);
  CHECK(ib.prefix_len == 16);
  CHECK(c.num_nodes() == 5);
  CHECK(c.evictable_size() == 17);
  c.dec_lock_ref(mb.node);
  CHECK(c.evictable_size() == 33);
  CHECK(c.protected_size() == 0);

  // The same prompt as a: the match stops one token short, inside a's 4-token node, which splits.
  Req same(2, 20, {1, 2, 3});
  const auto ms = c.match_prefix(same.kv);
  CHECK(ms.tokens == 19);
  CHECK(c.node_tokens(ms.node) == 3);
  CHECK(c.num_nodes() == 6);
  CHECK(c.cached_tokens() == 33);
  c.check_invariants();

  // Two requests prefilled the same prompt before either was cached: the second insert finds it
  // and hands its copy back to the pool.
  Req d1(3, 16, {40, 41}), d2(4, 16, {40, 41});
  REQUIRE(c.alloc(16));
  REQUIRE(c.alloc(16));
  CHECK(c.insert(d1.kv, 16, 0).prefix_len == 0);
  const Tokens available = c.available_size();
  CHECK(c.insert(d2.kv, 16, 0).prefix_len == 16);
  CHECK(c.available_size() == available + 16);
  CHECK(c.counters().duplicate_tokens == 16);
  CHECK(c.request_tokens() == 0);
  c.check_invariants();

  // A match on a request with no hashes only finds the request's own tokens.
  Req plain(5, 30);
  CHECK(c.match_prefix(plain.kv).tokens == 0);
}

TEST_CASE("radix: lock refs protect the path from eviction") {
  RadixKvCache c(1000);
  Req a(0, 20, {1, 2, 3});
  a.kv.num_tokens = 25;
  prefill_and_finish(c, a);
  Req b(1, 24, {1, 2, 7});
  prefill_and_finish(c, b);
  Req same(2, 20, {1, 2, 3});
  const auto m = c.match_prefix(same.kv);  // 8 + 8 + 3 of a's split node
  REQUIRE(m.tokens == 19);
  c.inc_lock_ref(m.node);
  CHECK(c.lock_ref(m.node) == 1);
  CHECK(c.lock_ref(c.parent(m.node)) == 1);
  CHECK(c.protected_size() == 19);
  // Everything else goes, oldest first: a's generated tail (5), b's last block (8), then the last
  // token of a's block 3, a leaf once the tail is gone.
  CHECK(c.evict(1000) == 14);
  CHECK(c.cached_tokens() == 19);
  CHECK(c.evictable_size() == 0);
  CHECK(c.evict(1000) == 0);
  CHECK(c.is_live(m.node));
  c.dec_lock_ref(m.node);
  CHECK(c.evictable_size() == 19);
  CHECK_THROWS_WITH(c.dec_lock_ref(m.node),
                    "RadixKvCache: unlock of node " + std::to_string(m.node) + " that is not locked");
  CHECK(c.evict(1) == 3);  // whole nodes: the 3-token leaf
  CHECK(c.evict(100) == 16);
  CHECK(c.num_nodes() == 0);
  CHECK(c.available_size() == 1000);
  CHECK_THROWS_WITH(c.inc_lock_ref(m.node), "RadixKvCache: lock of a freed node " + std::to_string(m.node));
  c.check_invariants();
}

TEST_CASE("radix: eviction takes the least recently used leaf first") {
  RadixKvCache c(100);
  Req x(0, 10), y(1, 10), z(2, 10);
  const NodeId nx = prefill_and_finish(c, x).node;
  const NodeId ny = prefill_and_finish(c, y).node;
  const NodeId nz = prefill_and_finish(c, z).node;
  CHECK(c.match_prefix(x.kv, 10).tokens == 10);  // x used again: now the most recent
  CHECK(c.evict(1) == 10);
  CHECK_FALSE(c.is_live(ny));
  CHECK(c.is_live(nx));
  CHECK(c.is_live(nz));
  CHECK(c.evict(1) == 10);
  CHECK_FALSE(c.is_live(nz));
  CHECK(c.evict(1) == 10);
  CHECK_FALSE(c.is_live(nx));
  CHECK(c.counters().evicted_nodes == 3);
  c.check_invariants();
}

TEST_CASE("radix: a parent whose last child is evicted becomes an evictable leaf") {
  RadixKvCache c(100);
  Req p1(0, 16, {1, 2}), p2(1, 16, {1, 3});
  const NodeId c1 = prefill_and_finish(c, p1).node;
  const NodeId c2 = prefill_and_finish(c, p2).node;
  const NodeId parent = c.parent(c1);
  REQUIRE(c.parent(c2) == parent);
  CHECK(c.node_tokens(parent) == 8);
  CHECK_FALSE(c.is_evictable_leaf(parent));
  CHECK(c.is_evictable_leaf(c1));
  CHECK(c.evict(8) == 8);  // the older child
  CHECK_FALSE(c.is_live(c1));
  CHECK_FALSE(c.is_evictable_leaf(parent));  // still has c2
  CHECK(c.evict(8) == 8);
  CHECK(c.is_evictable_leaf(parent));
  CHECK(c.evict(1) == 8);
  CHECK(c.num_nodes() == 0);

  // In one call: the parent joins the heap as its children go.
  RadixKvCache d(100);
  prefill_and_finish(d, p1);
  prefill_and_finish(d, p2);
  CHECK(d.evict(24) == 24);
  CHECK(d.num_nodes() == 0);
  d.check_invariants();
}

TEST_CASE("radix: insert checks what the request holds") {
  RadixKvCache c(100);
  Req r(5, 16, {9, 10});
  REQUIRE(c.alloc(16));
  CHECK_THROWS_WITH(c.insert(r.kv, 16, 8), "RadixKvCache: request 5 protects 8 tokens but only 0 are cached");
  CHECK_THROWS_WITH(c.insert(r.kv, 17, 0),
                    "RadixKvCache: insert of 17 tokens (protected 0) for request 5 with 16 tokens");
  c.free(10);
  CHECK_THROWS_WITH(c.insert(r.kv, 16, 0), "RadixKvCache: insert hands over 16 tokens but requests hold 6");
  c.check_invariants();
}

// ---------------------------------------------------------------------------------------------
// A plain model of the same rules: nodes owned through std::unique_ptr, children in a std::map,
// eviction by scanning every node for the least recently used unlocked leaf.

namespace {

class ReferenceRadix {
 public:
  struct Node {
    std::uint64_t base = 0;
    Tokens offset = 0, len = 0;
    Node* parent = nullptr;
    std::map<std::pair<std::uint64_t, Tokens>, std::unique_ptr<Node>> children;
    std::uint32_t lock = 0;
    std::uint64_t last_access = 0, created = 0;
  };

  explicit ReferenceRadix(Tokens size) : size_(size) { root_.lock = 1; }

  Tokens available() { return size_ - request_ - cached(); }
  bool alloc(Tokens n) {
    if (n > available()) return false;
    request_ += n;
    return true;
  }
  void free(Tokens n) {
    if (n > request_) throw std::logic_error("double free");
    request_ -= n;
  }

  std::pair<Tokens, Node*> match(const KvRequest& r, Tokens limit) {
    if (limit <= 0) return {0, &root_};
    ++clock_;
    return walk(r, limit);
  }

  std::pair<Tokens, Node*> insert(const KvRequest& r, Tokens n, Tokens protected_len) {
    if (n == 0) return {0, &root_};
    ++clock_;
    auto [matched, node] = walk(r, n);
    REQUIRE(matched >= protected_len);
    for (Tokens pos = matched; pos < n;) {
      const TokenRun run = token_run(r, pos);
      auto child = std::make_unique<Node>();
      child->base = run.base;
      child->offset = run.offset;
      child->len = std::min(run.end, n) - pos;
      child->parent = node;
      child->last_access = clock_;
      child->created = ++created_;
      pos += child->len;
      Node* raw = child.get();
      node->children[{run.base, run.offset}] = std::move(child);
      node = raw;
    }
    request_ -= n - protected_len;
    return {matched, node};
  }

  void lock(Node* n, int delta) {
    for (; n != &root_; n = n->parent) n->lock = static_cast<std::uint32_t>(static_cast<int>(n->lock) + delta);
  }

  Tokens evict(Tokens n) {
    Tokens freed = 0;
    while (freed < n) {
      Node* best = nullptr;
      visit(&root_, [&](Node* x) {
        if (x == &root_ || x->lock != 0 || !x->children.empty()) return;
        if (!best || std::make_pair(x->last_access, x->created) < std::make_pair(best->last_access, best->created))
          best = x;
      });
      if (!best) break;
      freed += best->len;
      best->parent->children.erase({best->base, best->offset});
    }
    return freed;
  }

  Tokens cached() { return sum([](const Node&) { return true; }); }
  Tokens evictable() { return sum([](const Node& x) { return x.lock == 0; }); }
  Tokens protected_tokens() { return sum([](const Node& x) { return x.lock > 0; }); }
  Tokens request_tokens() const { return request_; }

  std::vector<RadixKvCache::NodeInfo> snapshot() {
    std::vector<RadixKvCache::NodeInfo> out;
    visit(&root_, [&](Node* x) {
      if (x != &root_)
        out.push_back({x->created, x->parent->created, x->base, x->offset, x->len, x->lock, x->last_access});
    });
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.created < b.created; });
    return out;
  }

 private:
  std::pair<Tokens, Node*> walk(const KvRequest& r, Tokens limit) {
    Node* node = &root_;
    Tokens pos = 0;
    while (pos < limit) {
      const TokenRun run = token_run(r, pos);
      const Tokens available_here = std::min(run.end, limit) - pos;
      const auto it = node->children.find({run.base, run.offset});
      if (it == node->children.end()) break;
      Node* child = it->second.get();
      child->last_access = clock_;
      if (child->len > available_here) {  // split: a new upper node takes the first tokens
        auto up = std::make_unique<Node>();
        up->base = child->base;
        up->offset = child->offset;
        up->len = available_here;
        up->parent = node;
        up->lock = child->lock;
        up->last_access = clock_;
        up->created = ++created_;
        std::unique_ptr<Node> lower = std::move(it->second);
        node->children.erase(it);
        lower->offset += available_here;
        lower->len -= available_here;
        lower->parent = up.get();
        Node* raw = up.get();
        up->children[{lower->base, lower->offset}] = std::move(lower);
        node->children[{raw->base, raw->offset}] = std::move(up);
        return {pos + available_here, raw};
      }
      pos += child->len;
      node = child;
    }
    return {pos, node};
  }
  template <class F> void visit(Node* n, F f) {
    f(n);
    for (auto& [k, c] : n->children) visit(c.get(), f);
  }
  template <class P> Tokens sum(P p) {
    Tokens total = 0;
    visit(&root_, [&](Node* x) {
      if (x != &root_ && p(*x)) total += x->len;
    });
    return total;
  }

  Tokens size_;
  Tokens request_ = 0;
  Node root_;
  std::uint64_t clock_ = 0, created_ = 0;
};

Req random_request(Rng& rng, RequestId id) {
  const std::uint64_t doc = rng.uniform_int(0, 3);
  const auto blocks = static_cast<std::size_t>(rng.uniform_int(0, 4));
  std::vector<std::uint64_t> h;
  for (std::size_t k = 0; k < blocks; ++k) h.push_back(doc * 100 + k);
  if (blocks > 0 && rng.bernoulli(0.3)) h[rng.uniform_int(0, blocks - 1)] = 1000 + rng.uniform_int(0, 5);
  const Tokens prompt = blocks == 0 ? static_cast<Tokens>(rng.uniform_int(1, 30))
                                    : static_cast<Tokens>(blocks - 1) * 8 + static_cast<Tokens>(rng.uniform_int(1, 8));
  return Req(id, prompt, h, 8);
}

struct Live {
  Req req;
  bool running = false;
  Tokens protected_len = 0;  // tokens of the locked match / last insert
  Tokens own = 0;            // slots held outside the tree
  NodeId node = RadixKvCache::kRoot;
  ReferenceRadix::Node* ref_node = nullptr;
};

}  // namespace

TEST_CASE("radix: 10^5 random operations match the reference model") {
  constexpr Tokens kSize = 160;
  RadixKvCache cache(kSize);
  ReferenceRadix ref(kSize);
  Rng rng(77);
  std::map<RequestId, Live> live;
  RequestId next_id = 0;
  std::uint64_t admitted = 0, retracted = 0, hit = 0, splits_seen = 0;

  auto make_room = [&](Tokens need) {
    if (cache.available_size() >= need) return;
    const Tokens short_by = need - cache.available_size();
    REQUIRE(cache.evict(short_by) == ref.evict(short_by));
  };
  auto retract = [&](std::map<RequestId, Live>::iterator it) {  // free private slots, unlock, wait again
    Live& l = it->second;
    cache.free(l.own);
    ref.free(l.own);
    cache.dec_lock_ref(l.node);
    ref.lock(l.ref_node, -1);
    l = Live{l.req};
    ++retracted;
  };

  for (int step = 0; step < 100'000; ++step) {
    const double u = rng.uniform();
    auto pick = [&](bool running) { return pick_live(live, rng, running); };
    if (u < 0.12 || live.empty()) {
      live.emplace(next_id, Live{random_request(rng, next_id)});
      ++next_id;
    } else if (u < 0.35) {  // admit: match, lock, allocate the rest (evicting first)
      auto it = pick(false);
      if (it == live.end()) continue;
      Live& l = it->second;
      const std::uint32_t nodes_before = cache.num_nodes();
      const auto m = cache.match_prefix(l.req.kv);
      const auto rm = ref.match(l.req.kv, l.req.kv.num_tokens - 1);
      REQUIRE(m.tokens == rm.first);
      splits_seen += cache.num_nodes() > nodes_before;
      hit += m.tokens > 0;
      cache.inc_lock_ref(m.node);
      ref.lock(rm.second, +1);
      const Tokens need = l.req.kv.num_tokens - m.tokens;
      make_room(need);
      const bool ok = cache.alloc(need);
      REQUIRE(ok == ref.alloc(need));
      if (!ok) {
        cache.dec_lock_ref(m.node);
        ref.lock(rm.second, -1);
      } else {
        l.running = true;
        l.protected_len = m.tokens;
        l.own = need;
        l.node = m.node;
        l.ref_node = rm.second;
        ++admitted;
      }
    } else if (u < 0.70) {  // decode one token, retracting when no slot can be found
      auto it = pick(true);
      if (it == live.end()) continue;
      make_room(1);
      const bool ok = cache.alloc(1);
      REQUIRE(ok == ref.alloc(1));
      if (ok) {
        ++it->second.own;
        ++it->second.req.kv.num_tokens;
      } else {
        retract(it);
      }
    } else if (u < 0.80) {  // cache_unfinished_req: insert, move the lock to the new last node
      auto it = pick(true);
      if (it == live.end()) continue;
      Live& l = it->second;
      const auto ins = cache.insert(l.req.kv, l.req.kv.num_tokens, l.protected_len);
      const auto rins = ref.insert(l.req.kv, l.req.kv.num_tokens, l.protected_len);
      REQUIRE(ins.prefix_len == rins.first);
      cache.dec_lock_ref(l.node);
      ref.lock(l.ref_node, -1);
      cache.inc_lock_ref(ins.node);
      ref.lock(rins.second, +1);
      l.node = ins.node;
      l.ref_node = rins.second;
      l.protected_len = l.req.kv.num_tokens;
      l.own = 0;
    } else if (u < 0.92) {  // finish: cache_finished_req
      auto it = pick(true);
      if (it == live.end()) continue;
      Live& l = it->second;
      const auto ins = cache.insert(l.req.kv, l.req.kv.num_tokens, l.protected_len);
      REQUIRE(ins.prefix_len == ref.insert(l.req.kv, l.req.kv.num_tokens, l.protected_len).first);
      cache.dec_lock_ref(l.node);
      ref.lock(l.ref_node, -1);
      live.erase(it);
    } else if (u < 0.95) {
      auto it = pick(true);
      if (it != live.end()) retract(it);
    } else if (u < 0.98) {
      const Tokens n = static_cast<Tokens>(rng.uniform_int(0, 40));
      REQUIRE(cache.evict(n) == ref.evict(n));
    } else {  // freeing more than requests hold is refused and changes nothing
      const Tokens n = cache.request_tokens() + 1;
      CHECK_THROWS_AS(cache.free(n), std::logic_error);
      CHECK_THROWS_AS(ref.free(n), std::logic_error);
    }
    REQUIRE(cache.available_size() == ref.available());
    REQUIRE(cache.cached_tokens() == ref.cached());
    REQUIRE(cache.evictable_size() == ref.evictable());
    REQUIRE(cache.protected_size() == ref.protected_tokens());
    REQUIRE(cache.request_tokens() == ref.request_tokens());
    // The tree's invariants and the whole tree against the reference's after every step in Release,
    // after every fourth under the sanitizers (those walks are most of the run there; a difference
    // stays until the next). The walk, and so every figure checked at the end, is the same in both.
    if (!headroom::test::sanitized_every(step, 4)) continue;
    cache.check_invariants();
    Tokens own = 0;
    for (const auto& [id, l] : live) own += l.own;
    REQUIRE(cache.request_tokens() == own);
    REQUIRE(cache.snapshot() == ref.snapshot());
  }
  CHECK(admitted > 5000);
  CHECK(retracted > 500);
  CHECK(hit > 2000);
  CHECK(splits_seen > 100);
  CHECK(cache.counters().evicted_nodes > 1000);
}

TEST_CASE("radix: a warm cache allocates nothing") {
  {
    const std::size_t before = headroom::test::heap_allocations();
    void* p = ::operator new(16);
    ::operator delete(p);
    REQUIRE(headroom::test::heap_allocations() == before + 1);  // the counter is ours
  }
  RadixKvCache cache(400);
  std::vector<Req> pattern;
  for (RequestId id = 0; id < 24; ++id)
    pattern.emplace_back(id, static_cast<Tokens>(10 + 13 * id % 50), std::vector<std::uint64_t>{id % 3, 10 + id % 4}, 16);
  struct State {
    bool running = false;
    NodeId node = RadixKvCache::kRoot;
    Tokens own = 0;
  };
  std::vector<State> state(pattern.size());
  auto run = [&](int steps) {
    for (int t = 0; t < steps; ++t) {
      const std::size_t i = static_cast<std::size_t>(t * 5) % pattern.size();
      KvRequest& kv = pattern[i].kv;
      State& s = state[i];
      if (s.running) {  // finish: everything into the tree
        cache.insert(kv, kv.num_tokens, kv.num_tokens - s.own);
        cache.dec_lock_ref(s.node);
        s = State{};
        continue;
      }
      kv.num_tokens = kv.prompt_tokens + t % 7;
      const auto m = cache.match_prefix(kv);
      cache.inc_lock_ref(m.node);
      const Tokens need = kv.num_tokens - m.tokens;
      if (cache.available_size() < need) cache.evict(need - cache.available_size());
      if (!cache.alloc(need)) {
        cache.dec_lock_ref(m.node);
        continue;
      }
      s = State{true, m.node, need};
    }
  };
  run(100'000);  // warm-up: nodes, the child index and the heap reach their high-water marks
  const std::size_t before = headroom::test::heap_allocations();
  run(100'000);
  CHECK(headroom::test::heap_allocations() == before);
  CHECK(cache.counters().evicted_nodes > 100);
  cache.check_invariants();
}

// ---------------------------------------------------------------------------------------------
// SWARadixCache (sim/engine/swa_radix_kv_cache.hpp; swa_radix_cache.py @99fab2ce6): worked
// examples of its rules, a random comparison with a plain reference, and a warm loop.

namespace {

// The reference: pointer nodes holding their token names, std::map children, and recency stamps
// (a larger stamp is more recent) where SwaRadixKvCache keeps intrusive lists.
class ReferenceSwaRadix {
 public:
  using Name = std::pair<std::uint64_t, Tokens>;
  struct Node {
    std::vector<Name> toks;
    Node* parent = nullptr;
    std::map<Name, std::unique_ptr<Node>> children;
    std::uint32_t full_lock = 0, swa_lock = 0;
    std::uint64_t uuid = 0, created = 0, full_stamp = 0, swa_stamp = 0;
    bool tomb = false;
  };
  struct Lock {
    Node* node;
    std::uint64_t uuid;
  };

  ReferenceSwaRadix(Tokens full, Tokens swa, Tokens window) : full_(full), swa_(swa), window_(window) {
    root_.full_lock = root_.swa_lock = 1;
  }

  static std::vector<Name> names(const KvRequest& r, Tokens n) {
    std::vector<Name> out;
    for (Tokens p = 0; p < n; ++p) {
      const TokenRun run = token_run(r, p);
      out.emplace_back(run.base, run.offset);
    }
    return out;
  }

  Tokens full_available() const { return full_ - req_full_ - sum(false, false); }
  Tokens swa_available() const { return swa_ - req_swa_ - sum(true, false); }
  bool alloc(Tokens n) {
    if (n > full_available() || n > swa_available()) return false;
    req_full_ += n;
    req_swa_ += n;
    return true;
  }
  void free(Tokens full, Tokens swa) {
    req_full_ -= full;
    req_swa_ -= swa;
  }

  std::pair<Tokens, Node*> match(const KvRequest& r, Tokens limit) {
    if (limit <= 0) return {0, &root_};
    const std::vector<Name> key = names(r, limit);
    Node* node = &root_;
    std::size_t pos = 0;
    const Tokens kInf = std::numeric_limits<Tokens>::max() / 2;
    Tokens since = kInf, best_len = 0;
    Node* best = node;
    while (pos < key.size() && node->children.count(key[pos])) {
      Node* c = node->children[key[pos]].get();
      if (c->tomb) {
        if (since >= window_) best_len = static_cast<Tokens>(pos), best = node;
        since = 0;
      }
      const std::size_t common = common_len(c->toks, key, pos);
      if (common < c->toks.size()) {
        Node* up = split(c, common);
        pos += common;
        if (!up->tomb) since += static_cast<Tokens>(common);
        node = up;
        break;
      }
      pos += common;
      if (!c->tomb) since += static_cast<Tokens>(common);
      node = c;
    }
    if (since >= window_) best_len = static_cast<Tokens>(pos), best = node;
    stamp_path(best);
    return {best_len, best};
  }

  Tokens insert(const KvRequest& r, Tokens num, Tokens protected_len, Tokens swa_evicted) {
    const std::vector<Name> key = names(r, num);
    req_full_ -= num - protected_len;
    req_swa_ -= num - std::max(protected_len, swa_evicted);
    Node* node = &root_;
    std::size_t total = 0;
    while (total < key.size() && node->children.count(key[total])) {
      node = node->children[key[total]].get();
      node->full_stamp = ++clock_;
      if (!node->tomb) node->swa_stamp = ++clock_;
      const std::size_t common = common_len(node->toks, key, total);
      if (common < node->toks.size()) node = split(node, common);
      const auto t = static_cast<Tokens>(total), len = static_cast<Tokens>(common);
      if (protected_len < t + len && node->tomb) {
        if (swa_evicted <= t) {
          untomb(node);
        } else if (swa_evicted < t + len) {
          split(node, static_cast<std::size_t>(swa_evicted - t));
          untomb(node);
        }
      }
      total += common;
    }
    const Tokens cached = static_cast<Tokens>(total);
    const std::size_t tomb_end = swa_evicted > cached ? static_cast<std::size_t>(swa_evicted) : total;
    for (std::size_t pos = total; pos < key.size();) {
      std::size_t end = pos + 1;  // one node per run of consecutive names, split at tomb_end
      while (end < key.size() && key[end].first == key[pos].first && end != tomb_end) ++end;
      auto n = std::make_unique<Node>();
      n->toks.assign(key.begin() + static_cast<std::ptrdiff_t>(pos), key.begin() + static_cast<std::ptrdiff_t>(end));
      n->parent = node;
      n->tomb = pos < tomb_end;
      n->created = ++created_;
      n->full_stamp = ++clock_;
      if (!n->tomb) n->swa_stamp = ++clock_;
      Node* raw = n.get();
      node->children[key[pos]] = std::move(n);
      node = raw;
      pos = end;
    }
    return cached;
  }

  Lock lock(Node* node) {
    Lock l{node, 0};
    Tokens swa_locked = 0;
    for (Node* n = node; n != &root_; n = n->parent) {
      ++n->full_lock;
      if (swa_locked < window_) {
        ++n->swa_lock;
        swa_locked += static_cast<Tokens>(n->toks.size());
        if (swa_locked >= window_) {
          if (n->uuid == 0) n->uuid = ++uuid_;
          l.uuid = n->uuid;
        }
      }
    }
    return l;
  }
  void unlock(const Lock& l) {
    bool swa = true;
    for (Node* n = l.node; n != &root_; n = n->parent) {
      --n->full_lock;
      if (swa) {
        --n->swa_lock;
        if (l.uuid != 0 && n->uuid == l.uuid) swa = false;
      }
    }
  }

  std::pair<Tokens, Tokens> evict(Tokens full_n, Tokens swa_n) {
    Tokens full = 0, swa = 0;
    if (full_n > 0) {
      Node* x = next_after(0, false, true);
      while (full < full_n && x) {
        const auto len = static_cast<Tokens>(x->toks.size());
        full += len;
        swa += len;
        Node* next = next_after(x->full_stamp, false, true);
        Node* last = remove_with_tombstones(x, full);
        if (last->children.empty()) next = next_after(0, false, true);
        x = next;
      }
    }
    if (swa < swa_n) {
      Node* x = next_after(0, true, false);
      while (swa < swa_n && x) {
        Node* next = next_after(x->swa_stamp, true, false);
        swa += static_cast<Tokens>(x->toks.size());
        if (!x->children.empty()) {
          x->tomb = true;
        } else {
          full += static_cast<Tokens>(x->toks.size());
          remove_with_tombstones(x, full);
        }
        x = next;
      }
    }
    return {full, swa};
  }

  // What the cache's snapshot() and lru_order() give.
  std::vector<SwaRadixKvCache::NodeInfo> snapshot() const {
    std::vector<SwaRadixKvCache::NodeInfo> out;
    visit([&](const Node& n) {
      out.push_back({n.created, n.parent->created, static_cast<Tokens>(n.toks.size()), n.full_lock, n.swa_lock, n.tomb});
    });
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.created < b.created; });
    return out;
  }
  std::vector<std::uint64_t> lru_order(bool swa_list) const {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> s;
    visit([&](const Node& n) {
      if (!swa_list || !n.tomb) s.emplace_back(swa_list ? n.swa_stamp : n.full_stamp, n.created);
    });
    std::sort(s.begin(), s.end());
    std::vector<std::uint64_t> out;
    for (const auto& p : s) out.push_back(p.second);
    return out;
  }
  // Σ tokens: SWA KV (non-tombstones) or full KV; only unlocked (evictable) or all.
  Tokens sum(bool swa, bool unlocked_only) const {
    Tokens t = 0;
    visit([&](const Node& n) {
      if (swa && n.tomb) return;
      if (unlocked_only && (swa ? n.swa_lock : n.full_lock) != 0) return;
      t += static_cast<Tokens>(n.toks.size());
    });
    return t;
  }
  Tokens request_full() const { return req_full_; }
  Tokens request_swa() const { return req_swa_; }

 private:
  template <class F>
  void visit(F&& f) const {
    std::vector<const Node*> stack{&root_};
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      if (n != &root_) f(*n);
      for (const auto& [k, c] : n->children) stack.push_back(c.get());
    }
  }
  static std::size_t common_len(const std::vector<Name>& toks, const std::vector<Name>& key, std::size_t pos) {
    std::size_t i = 0;
    while (i < toks.size() && pos + i < key.size() && toks[i] == key[pos + i]) ++i;
    return i;
  }
  Node* split(Node* child, std::size_t at) {
    auto up = std::make_unique<Node>();
    Node* u = up.get();
    Node* parent = child->parent;
    u->toks.assign(child->toks.begin(), child->toks.begin() + static_cast<std::ptrdiff_t>(at));
    child->toks.erase(child->toks.begin(), child->toks.begin() + static_cast<std::ptrdiff_t>(at));
    u->parent = parent;
    u->full_lock = child->full_lock;
    u->swa_lock = child->swa_lock;
    u->uuid = child->uuid;
    child->uuid = 0;
    u->tomb = child->tomb;
    u->created = ++created_;
    std::unique_ptr<Node> owned = std::move(parent->children[u->toks.front()]);
    child->parent = u;
    u->children[child->toks.front()] = std::move(owned);
    parent->children[u->toks.front()] = std::move(up);
    u->full_stamp = ++clock_;
    child->full_stamp = ++clock_;
    if (!u->tomb) {
      u->swa_stamp = ++clock_;
      child->swa_stamp = ++clock_;
    }
    return u;
  }
  void untomb(Node* n) {
    n->tomb = false;
    n->swa_stamp = ++clock_;
  }
  void stamp_path(Node* n) {
    std::vector<Node*> path;
    for (; n != &root_; n = n->parent) path.push_back(n);
    for (auto it = path.rbegin(); it != path.rend(); ++it) (*it)->full_stamp = ++clock_;
    for (auto it = path.rbegin(); it != path.rend(); ++it)
      if (!(*it)->tomb) (*it)->swa_stamp = ++clock_;
  }
  // The least recent node more recent than `after` in the full (or SWA) order that is unlocked in
  // that pool (and a leaf when `leaf`).
  Node* next_after(std::uint64_t after, bool swa, bool leaf) {
    Node* best = nullptr;
    std::vector<Node*> stack{&root_};
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (auto& [k, c] : n->children) stack.push_back(c.get());
      if (n == &root_ || (swa && n->tomb)) continue;
      const std::uint64_t s = swa ? n->swa_stamp : n->full_stamp;
      if (s <= after || (swa ? n->swa_lock : n->full_lock) != 0 || (leaf && !n->children.empty())) continue;
      if (!best || s < (swa ? best->swa_stamp : best->full_stamp)) best = n;
    }
    return best;
  }
  // Deletes leaf x, then its tombstone ancestors left childless and not full-locked; returns the
  // last node deleted's parent... as the cache does, the node whose parent decides a restart.
  Node* remove_with_tombstones(Node* x, Tokens& full) {
    Node* p = x->parent;
    const Name k = x->toks.front();
    p->children.erase(k);
    Node* last_parent = p;
    while (p != &root_ && p->tomb && p->children.empty() && p->full_lock == 0) {
      full += static_cast<Tokens>(p->toks.size());
      Node* up = p->parent;
      up->children.erase(p->toks.front());
      last_parent = up;
      p = up;
    }
    return last_parent;
  }

  Tokens full_, swa_, window_;
  Tokens req_full_ = 0, req_swa_ = 0;
  Node root_;
  std::uint64_t clock_ = 0, created_ = 0, uuid_ = 1;
};

struct SwaLive {
  Req req;
  bool running = false;
  Tokens locked = 0;       // tokens of the locked prefix
  Tokens swa_evicted = 0;  // swa_evicted_seqlen
  SwaRadixKvCache::Lock lock{};
  ReferenceSwaRadix::Lock ref_lock{nullptr, 0};
};

// Requests whose hash ids are prefix hashes: equal ids at a position mean equal tokens before it.
Req swa_random_request(Rng& rng, RequestId id) {
  const auto blocks = static_cast<std::size_t>(rng.uniform_int(0, 5));
  std::vector<std::uint64_t> h;
  std::uint64_t path = 1;
  for (std::size_t k = 0; k < blocks; ++k) {
    path = path * 2 + rng.uniform_int(0, 1);
    h.push_back(path);
  }
  const Tokens prompt = blocks == 0 ? static_cast<Tokens>(rng.uniform_int(1, 30))
                                    : static_cast<Tokens>(blocks - 1) * 8 + static_cast<Tokens>(rng.uniform_int(1, 12));
  return Req(id, prompt, h, 8);
}

}  // namespace

TEST_CASE("SWA radix: eviction frees unlocked leaves, then tombstones, and a match needs the window after a tombstone") {
  CHECK_THROWS_AS(SwaRadixKvCache(100, 0, 8), InputError);
  SwaRadixKvCache c(100, 60, 8);
  // Request A: four 8-token blocks, cached whole and unlocked: nodes a0-a1-a2-a3 in both pools.
  Req a(1, 32, {10, 11, 12, 13});
  REQUIRE(c.alloc(32));
  CHECK_FALSE(c.alloc(29));  // the SWA pool has 28 left
  CHECK(c.insert(a.kv, 32, 0, 0) == 0);
  CHECK(c.tree_full_tokens() == 32);
  CHECK(c.tree_swa_tokens() == 32);
  CHECK(c.lru_order(false) == std::vector<std::uint64_t>{1, 2, 3, 4});  // least recent first: a0 .. a3
  // B shares a0 a1: its match (16 tokens) makes that path the most recent, a1 before a0.
  Req b(2, 24, {10, 11, 20});
  const auto mb = c.match_prefix(b.kv, 23);
  CHECK(mb.tokens == 16);
  CHECK(c.lru_order(false) == std::vector<std::uint64_t>{3, 4, 1, 2});
  // Its lock: full on a1 and a0, SWA on a1 alone (8 tokens reach the window).
  const auto lb = c.inc_lock_ref(mb.node);
  CHECK(lb.swa_uuid == 2);  // gen_swa_uuid's first id
  CHECK(c.full_protected_size() == 16);
  CHECK(c.swa_protected_size() == 8);
  REQUIRE(c.alloc(8));
  // evict(0, 20), SWA list from its least recent end: a2 is inner -> tombstone (8); a3 is a leaf ->
  // deleted in both pools (16), and its tombstone parent a2, now a childless leaf, goes too (full
  // only); a0 is inner and SWA-unlocked -> tombstone (24 >= 20). a1 stays SWA-locked.
  const auto e = c.evict(0, 20);
  CHECK(e.swa == 24);
  CHECK(e.full == 16);
  CHECK(c.snapshot() == std::vector<SwaRadixKvCache::NodeInfo>{{1, 0, 8, 1, 0, true}, {2, 1, 8, 1, 1, false}});
  CHECK(c.full_available() == 100 - 8 - 16);
  CHECK(c.swa_available() == 60 - 8 - 8);
  // C shares a0 a1 a2: a0 is a tombstone, but a1's 8 tokens after it cover the window: 16 match.
  Req cq(3, 24, {10, 11, 12});
  CHECK(c.match_prefix(cq.kv, 23).tokens == 16);
  // D shares only a0: nothing after the tombstone, so nothing matches.
  Req d(4, 12, {10});
  CHECK(c.match_prefix(d.kv, 11).tokens == 0);
  // B finishes without inserting (a retraction): its slots go back, its lock too.
  c.free(8, 8);
  c.dec_lock_ref(lb);
  CHECK(c.full_protected_size() == 0);
  CHECK(c.swa_protected_size() == 0);
  // evict(100, 0): a1 is the only unlocked leaf (both pools); then its tombstone parent a0.
  const auto all = c.evict(100, 0);
  CHECK(all.full == 16);
  CHECK(all.swa == 8);
  CHECK(c.num_nodes() == 0);
  CHECK(c.full_available() == 100);
  CHECK(c.swa_available() == 60);
  c.check_invariants();
}

TEST_CASE("SWA radix: insert of tokens whose SWA slots were freed, the three cases for a tombstone") {
  SwaRadixKvCache c(200, 200, 4);
  Req a(1, 20);  // 20 tokens unique to request 1
  // A decoded to 20 tokens and freed the SWA slots of its first 15 (_evict_swa): it holds 20 full
  // and 5 SWA slots; insert makes [0, 15) a tombstone and [15, 20) a node with SWA KV.
  REQUIRE(c.alloc(20));
  c.free_swa(15);
  CHECK(c.insert(a.kv, 20, 0, 15) == 0);
  CHECK(c.snapshot() == std::vector<SwaRadixKvCache::NodeInfo>{{1, 0, 15, 0, 0, true}, {2, 1, 5, 0, 0, false}});
  CHECK(c.tree_full_tokens() == 20);
  CHECK(c.tree_swa_tokens() == 5);
  // The same tokens again (a retracted request back): the tombstone, then 4 tokens with SWA KV
  // reach the window of 4: 19 match (the node is split at 19).
  CHECK(c.match_prefix(a.kv, 19).tokens == 19);
  // Case 3: a copy that lost its SWA KV up to 16 finds [0, 15) a tombstone: nothing changes, all of
  // its slots go back (20 full, 4 SWA).
  REQUIRE(c.alloc(20));
  c.free_swa(16);
  CHECK(c.insert(a.kv, 20, 0, 16) == 20);
  CHECK(c.tree_swa_tokens() == 5);
  CHECK(c.request_full_tokens() == 0);
  CHECK(c.request_swa_tokens() == 0);
  // Case 2: a copy that lost its SWA KV up to 8: the tombstone is split at 8, [8, 15) takes the
  // copy's KV (its old full KV is freed), [0, 8) stays a tombstone.
  REQUIRE(c.alloc(20));
  c.free_swa(8);
  CHECK(c.insert(a.kv, 20, 0, 8) == 20);
  CHECK(c.tree_swa_tokens() == 12);
  CHECK(c.snapshot() == std::vector<SwaRadixKvCache::NodeInfo>{{1, 4, 7, 0, 0, false},
                                                               {2, 3, 1, 0, 0, false},
                                                               {3, 1, 4, 0, 0, false},
                                                               {4, 0, 8, 0, 0, true}});
  // Case 1: a copy with all its SWA KV: the last tombstone takes it.
  REQUIRE(c.alloc(20));
  CHECK(c.insert(a.kv, 20, 0, 0) == 20);
  CHECK(c.tree_swa_tokens() == 20);
  CHECK(c.full_available() == 180);
  CHECK(c.swa_available() == 180);
  c.check_invariants();
}

TEST_CASE("SWA radix: the SWA lock stops at the window, a split hands the stop mark to the upper node") {
  SwaRadixKvCache c(100, 100, 10);
  Req a(1, 32, {10, 11, 12, 13});
  REQUIRE(c.alloc(32));
  c.insert(a.kv, 32, 0, 0);
  const auto m = c.match_prefix(a.kv, 32);
  REQUIRE(m.tokens == 32);
  const auto lock = c.inc_lock_ref(m.node);  // SWA on a3 and a2 (16 >= 10), full on all four
  CHECK(c.full_protected_size() == 32);
  CHECK(c.swa_protected_size() == 16);
  // A 20-token request sharing a0 a1 and 4 tokens of a2 splits a2 at 3 (its match stops at 19).
  Req b(2, 20, {10, 11, 12});
  CHECK(c.match_prefix(b.kv, 19).tokens == 19);
  CHECK(c.snapshot() == std::vector<SwaRadixKvCache::NodeInfo>{{1, 0, 8, 1, 0, false},
                                                               {2, 1, 8, 1, 0, false},
                                                               {3, 5, 5, 1, 1, false},
                                                               {4, 3, 8, 1, 1, false},
                                                               {5, 2, 3, 1, 1, false}});
  c.dec_lock_ref(lock);  // stops at the upper half of a2, which carries the mark now
  CHECK(c.full_protected_size() == 0);
  CHECK(c.swa_protected_size() == 0);
  c.check_invariants();
}

TEST_CASE("SWA radix: 8,000 random operations match the reference model") {
  constexpr Tokens kFull = 300, kSwa = 180, kWindow = 12;
  SwaRadixKvCache cache(kFull, kSwa, kWindow);
  ReferenceSwaRadix ref(kFull, kSwa, kWindow);
  Rng rng(2026);
  std::map<RequestId, SwaLive> live;
  RequestId next_id = 0;
  std::uint64_t admitted = 0, finished = 0, hits = 0, swa_freed = 0;

  auto evict_both = [&](Tokens full, Tokens swa) {
    const auto e = cache.evict(full, swa);
    const auto r = ref.evict(full, swa);
    REQUIRE(e.full == r.first);
    REQUIRE(e.swa == r.second);
  };
  auto make_room = [&](Tokens need) {  // evict_from_tree_cache: each pool's shortfall
    const Tokens f = cache.full_available(), w = cache.swa_available();
    if (f < need || w < need) evict_both(std::max<Tokens>(0, need - f), std::max<Tokens>(0, need - w));
  };
  auto own_full = [](const SwaLive& l) { return l.req.kv.num_tokens - l.locked; };
  auto own_swa = [](const SwaLive& l) { return l.req.kv.num_tokens - std::max(l.locked, l.swa_evicted); };
  auto release = [&](std::map<RequestId, SwaLive>::iterator it) {  // retract: slots back, unlock
    SwaLive& l = it->second;
    cache.free(own_full(l), own_swa(l));
    ref.free(own_full(l), own_swa(l));
    cache.dec_lock_ref(l.lock);
    ref.unlock(l.ref_lock);
    l = SwaLive{swa_random_request(rng, it->first)};
  };

  for (int step = 0; step < 8'000; ++step) {
    const double u = rng.uniform();
    auto pick = [&](bool running) { return pick_live(live, rng, running); };
    if (u < 0.12 || live.empty()) {
      live.emplace(next_id, SwaLive{swa_random_request(rng, next_id)});
      ++next_id;
    } else if (u < 0.34) {  // admit: match, lock, allocate the rest
      auto it = pick(false);
      if (it == live.end()) continue;
      SwaLive& l = it->second;
      const auto m = cache.match_prefix(l.req.kv, l.req.kv.num_tokens - 1);
      const auto rm = ref.match(l.req.kv, l.req.kv.num_tokens - 1);
      REQUIRE(m.tokens == rm.first);
      hits += m.tokens > 0;
      l.lock = cache.inc_lock_ref(m.node);
      l.ref_lock = ref.lock(rm.second);
      REQUIRE(l.lock.swa_uuid == l.ref_lock.uuid);
      const Tokens need = l.req.kv.num_tokens - m.tokens;
      make_room(need);
      const bool ok = cache.alloc(need);
      REQUIRE(ok == ref.alloc(need));
      if (!ok) {
        cache.dec_lock_ref(l.lock);
        ref.unlock(l.ref_lock);
        continue;
      }
      l.running = true;
      l.locked = m.tokens;
      l.swa_evicted = 0;
      ++admitted;
    } else if (u < 0.66) {  // decode a token; every few, _evict_swa's window rule
      auto it = pick(true);
      if (it == live.end()) continue;
      SwaLive& l = it->second;
      make_room(1);
      const bool ok = cache.alloc(1);
      REQUIRE(ok == ref.alloc(1));
      if (!ok) {
        release(it);
        continue;
      }
      ++l.req.kv.num_tokens;
      if (rng.bernoulli(0.3)) {
        l.swa_evicted = std::max(l.swa_evicted, l.locked);
        const Tokens target = std::max(l.swa_evicted, l.req.kv.num_tokens - 1 - kWindow);
        cache.free_swa(target - l.swa_evicted);
        ref.free(0, target - l.swa_evicted);
        swa_freed += static_cast<std::uint64_t>(target - l.swa_evicted);
        l.swa_evicted = target;
      }
    } else if (u < 0.74) {  // cache_unfinished_req (before any SWA slot was freed): insert, match, relock
      auto it = pick(true);
      if (it == live.end() || it->second.swa_evicted > it->second.locked) continue;
      SwaLive& l = it->second;
      const Tokens n = l.req.kv.num_tokens;
      REQUIRE(cache.insert(l.req.kv, n, l.locked, 0) == ref.insert(l.req.kv, n, l.locked, 0));
      const auto m = cache.match_prefix(l.req.kv, n);
      const auto rm = ref.match(l.req.kv, n);
      REQUIRE(m.tokens == n);
      REQUIRE(rm.first == n);
      cache.dec_lock_ref(l.lock);
      ref.unlock(l.ref_lock);
      l.lock = cache.inc_lock_ref(m.node);
      l.ref_lock = ref.lock(rm.second);
      l.locked = n;
    } else if (u < 0.88) {  // cache_finished_req: insert with swa_evicted_seqlen, unlock
      auto it = pick(true);
      if (it == live.end()) continue;
      SwaLive& l = it->second;
      const Tokens n = l.req.kv.num_tokens;
      REQUIRE(cache.insert(l.req.kv, n, l.locked, l.swa_evicted) == ref.insert(l.req.kv, n, l.locked, l.swa_evicted));
      cache.dec_lock_ref(l.lock);
      ref.unlock(l.ref_lock);
      live.erase(it);
      ++finished;
    } else if (u < 0.93) {
      auto it = pick(true);
      if (it != live.end()) release(it);
    } else {
      evict_both(static_cast<Tokens>(rng.uniform_int(0, 30)), static_cast<Tokens>(rng.uniform_int(0, 40)));
    }
    cache.check_invariants();
    REQUIRE(cache.full_available() == ref.full_available());
    REQUIRE(cache.swa_available() == ref.swa_available());
    REQUIRE(cache.full_evictable_size() == ref.sum(false, true));
    REQUIRE(cache.swa_evictable_size() == ref.sum(true, true));
    REQUIRE(cache.request_full_tokens() == ref.request_full());
    REQUIRE(cache.request_swa_tokens() == ref.request_swa());
    Tokens full = 0, swa = 0;
    for (const auto& [id, l] : live)
      if (l.running) full += own_full(l), swa += own_swa(l);
    REQUIRE(cache.request_full_tokens() == full);
    REQUIRE(cache.request_swa_tokens() == swa);
    REQUIRE(cache.snapshot() == ref.snapshot());
    REQUIRE(cache.lru_order(false) == ref.lru_order(false));
    REQUIRE(cache.lru_order(true) == ref.lru_order(true));
  }
  CHECK(admitted > 400);
  CHECK(finished > 200);
  CHECK(hits > 100);
  CHECK(swa_freed > 400);
  CHECK(cache.counters().tombstoned_nodes > 40);
  CHECK(cache.counters().evicted_nodes > 200);
}

TEST_CASE("SWA radix: a warm cache allocates nothing") {
  SwaRadixKvCache cache(400, 250, 16);
  std::vector<Req> pattern;
  for (RequestId id = 0; id < 24; ++id)
    pattern.emplace_back(id, static_cast<Tokens>(10 + 13 * id % 50), std::vector<std::uint64_t>{id % 3, 10 + id % 4}, 16);
  struct State {
    bool running = false;
    SwaRadixKvCache::Lock lock;
    Tokens locked = 0;
    Tokens swa_evicted = 0;
  };
  std::vector<State> state(pattern.size());
  auto run = [&](int steps) {
    for (int t = 0; t < steps; ++t) {
      const std::size_t i = static_cast<std::size_t>(t * 5) % pattern.size();
      KvRequest& kv = pattern[i].kv;
      State& s = state[i];
      if (s.running) {  // finish: out-of-window SWA freed, everything into the tree
        const Tokens target = std::max(s.locked, kv.num_tokens - 1 - 16);
        if (target > s.locked) cache.free_swa(target - s.locked);
        cache.insert(kv, kv.num_tokens, s.locked, std::max(target, s.locked));
        cache.dec_lock_ref(s.lock);
        s = State{};
        continue;
      }
      kv.num_tokens = kv.prompt_tokens + t % 40;
      const auto m = cache.match_prefix(kv, kv.num_tokens - 1);
      const auto lock = cache.inc_lock_ref(m.node);
      const Tokens need = kv.num_tokens - m.tokens;
      const Tokens f = cache.full_available(), w = cache.swa_available();
      if (f < need || w < need) cache.evict(std::max<Tokens>(0, need - f), std::max<Tokens>(0, need - w));
      if (!cache.alloc(need)) {
        cache.dec_lock_ref(lock);
        continue;
      }
      s = State{true, lock, m.tokens, 0};
    }
  };
  run(50'000);  // warm-up: nodes and the child index reach their high-water marks
  const std::size_t before = headroom::test::heap_allocations();
  run(50'000);
  CHECK(headroom::test::heap_allocations() == before);
  CHECK(cache.counters().tombstoned_nodes > 100);
  cache.check_invariants();
}
