// LightLLM's token pool (sim/engine/token_kv_pool.hpp): known answers for docs/serving-memory-model.md
// §3, a 10^5-step random comparison with a std::map ledger, and a steady state that allocates
// nothing.
#include <catch2/catch.hpp>

#include <map>
#include <stdexcept>

#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"
#include "sim/engine/token_kv_pool.hpp"
#include "tests/support/allocation_counter.hpp"


using namespace headroom;
using namespace headroom::engine;

TEST_CASE("token pool: sizes, the hold row, failed and double frees") {
  CHECK_THROWS_WITH(TokenKvPool(0), "LightLLM KV pool: size must be at least 1 token, got 0");
  CHECK_THROWS_AS(TokenKvPool(-1), InputError);
  TokenKvPool p(100);
  CHECK(p.tensor_rows() == 101);  // + HOLD_TOKEN_MEMINDEX
  CHECK(p.can_use_mem_size() == 100);
  REQUIRE(p.alloc(0, 30));
  REQUIRE(p.alloc(1, 50));
  REQUIRE(p.alloc(0, 10));
  CHECK(p.tokens_of(0) == 40);
  CHECK(p.can_use_mem_size() == 10);
  CHECK_FALSE(p.alloc(2, 11));  // LightLLM would assert "error alloc state"
  CHECK(p.can_use_mem_size() == 10);
  CHECK(p.tokens_of(2) == 0);
  CHECK(p.num_requests() == 2);
  CHECK(p.counters().failed_allocations == 1);
  CHECK(p.free(0) == 40);
  CHECK(p.can_use_mem_size() == 50);
  CHECK_THROWS_WITH(p.free(0), "TokenKvPool: request 0 holds no slots (double free?)");
  CHECK_THROWS_WITH(p.free(7), "TokenKvPool: request 7 holds no slots (double free?)");
  CHECK(p.can_use_mem_size() == 50);
  CHECK(p.peak_used() == 90);
  REQUIRE(p.alloc(3, 0));  // a request registered with nothing yet can be freed once
  CHECK(p.free(3) == 0);
  CHECK_THROWS_AS(p.alloc(4, -1), std::logic_error);
  // A released id stays refused, though its row is still in the window (id 0 is not released).
  CHECK(p.free(1) == 50);
  p.release(1);
  CHECK_THROWS_WITH(p.alloc(1, 1), "TokenKvPool: request 1 was released");
  CHECK(p.counters().allocations == 4);
  p.check_invariants();
}

TEST_CASE("token pool: 10^5 random operations match a ledger") {
  TokenKvPool pool(500);
  std::map<RequestId, Tokens> ledger;
  Tokens used = 0, peak = 0;
  Rng rng(5);
  std::uint64_t failed = 0;
  for (int step = 0; step < 100'000; ++step) {
    const RequestId id = rng.uniform_int(0, 63);
    const double u = rng.uniform();
    if (u < 0.6) {
      const Tokens n = static_cast<Tokens>(rng.uniform_int(0, 60));
      const bool fits = n <= 500 - used;
      REQUIRE(pool.alloc(id, n) == fits);
      if (fits) {
        ledger[id] += n;
        used += n;
        peak = std::max(peak, used);
      } else {
        ++failed;
      }
    } else {
      const auto it = ledger.find(id);
      if (it == ledger.end()) {
        REQUIRE_THROWS_AS(pool.free(id), std::logic_error);
      } else {
        REQUIRE(pool.free(id) == it->second);
        used -= it->second;
        ledger.erase(it);
      }
    }
    pool.check_invariants();
    REQUIRE(pool.used() == used);
    REQUIRE(pool.peak_used() == peak);
    REQUIRE(pool.num_requests() == ledger.size());
    REQUIRE(pool.tokens_of(id) == (ledger.count(id) ? ledger[id] : 0));
  }
  CHECK(failed > 1000);
  CHECK(pool.counters().failed_allocations == failed);
}

TEST_CASE("token pool: a warm pool allocates nothing") {
  TokenKvPool pool(1000);
  auto run = [&](int steps) {
    for (int t = 0; t < steps; ++t) {
      const RequestId id = static_cast<RequestId>(t * 7 % 97);
      if (pool.tokens_of(id) > 0)
        pool.free(id);
      else
        pool.alloc(id, 1 + t % 50);
    }
  };
  run(1000);
  const std::size_t before = headroom::test::heap_allocations();
  run(100'000);
  CHECK(headroom::test::heap_allocations() == before);
  pool.check_invariants();
}
