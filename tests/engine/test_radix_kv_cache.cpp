// SGLang's token pool and radix cache (sim/engine/radix_kv_cache.hpp): known answers for the rules
// of docs/serving-memory-model.md §2.2/§2.4, a 10^5-step random comparison with a plain pointer-and-
// std::map tree following the same rules, and a steady state that allocates nothing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"
#include "sim/engine/radix_kv_cache.hpp"
#include "tests/support/allocation_counter.hpp"


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
    auto pick = [&](bool running) -> std::map<RequestId, Live>::iterator {
      std::vector<RequestId> c;
      for (const auto& [id, l] : live)
        if (l.running == running) c.push_back(id);
      if (c.empty()) return live.end();
      return live.find(c[rng.uniform_int(0, c.size() - 1)]);
    };
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
    cache.check_invariants();
    REQUIRE(cache.available_size() == ref.available());
    REQUIRE(cache.cached_tokens() == ref.cached());
    REQUIRE(cache.evictable_size() == ref.evictable());
    REQUIRE(cache.protected_size() == ref.protected_tokens());
    REQUIRE(cache.request_tokens() == ref.request_tokens());
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
