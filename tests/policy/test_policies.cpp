// Start-up policies: their arithmetic against worked numbers (static fractions, the profiled
// budget, the fragmentation buffer, the three-region workspace solve against a brute-force
// reference) and their behaviour through the allocator model (profiled equals vLLM's own
// accounting; auto_profile takes exactly as many 5% shrinks as its stress needs and gives up
// after max_retries; release_on_oom holds its canary; workspace_cap caps aiter's partitions).
#include <catch2/catch.hpp>

#include <random>

#include "sim/engine/startup.hpp"
#include "sim/model/catalogue.hpp"
#include "sim/policy/kv_budget.hpp"
#include "sim/policy/policy.hpp"
#include "sim/policy/workspace_aware.hpp"
#include "tests/engine/deployment_on.hpp"

using namespace headroom;
using namespace headroom::policy;

using headroom::engine::test::on;

namespace {

PolicySpec spec(PolicyKind kind) {
  PolicySpec s;
  s.kind = kind;
  return s;
}

// The largest whole-block t with t × cell + workspace(t) ≤ budget, by bisection (LHS grows with t).
std::int64_t brute_force(std::int64_t budget, Bytes cell, int block, const engine::ClampedWorkspace& w) {
  auto fits = [&](std::int64_t t) {
    return static_cast<double>(t) * static_cast<double>(cell) + static_cast<double>(w.bytes(t)) <=
           static_cast<double>(budget);
  };
  std::int64_t lo = 0, hi = budget / static_cast<std::int64_t>(cell) / block + 1;
  while (lo < hi) {
    std::int64_t mid = (lo + hi + 1) / 2;
    if (fits(mid * block)) lo = mid;
    else hi = mid - 1;
  }
  return lo * block;
}

}  // namespace

TEST_CASE("static_fraction: each engine's own arithmetic at the given fraction") {
  engine::Deployment d = on("h100-sxm-80gb");
  engine::StartupResult r;
  engine::KvSizingInputs in(d, r);
  in.free_before_weights = 80 * GiB;
  in.free_after_weights = 65 * GiB;  // 15 GiB of weights
  in.kv_bytes_per_token = 128 * KiB;
  in.kv_block_tokens = 16;
  const double total = static_cast<double>(d.total());
  // vLLM without profiling: total × f − weights, in whole blocks.
  auto vllm_expect = static_cast<std::int64_t>((std::floor(total * 0.9) - 15.0 * GiB) / (128.0 * KiB)) / 16 * 16;
  CHECK(static_fraction_tokens(model::Engine::vllm, in, 0.9) == vllm_expect);
  // SGLang §2.2: (free_after − free_before × (1 − MFS)) / cell.
  in.kv_block_tokens = 1;
  CHECK(static_fraction_tokens(model::Engine::sglang, in, 0.835) ==
        static_cast<std::int64_t>((65.0 * GiB - 80.0 * GiB * 0.165) / (128.0 * KiB)));
  // LightLLM §3: (free_after − total × (1 − f)) / cell.
  CHECK(static_fraction_tokens(model::Engine::lightllm, in, 0.9) ==
        static_cast<std::int64_t>(std::floor((65.0 * GiB - total * 0.1) / (128.0 * KiB))));
  // Nothing left: zero, never negative.
  CHECK(static_fraction_tokens(model::Engine::lightllm, in, 0.1) == 0);
}

TEST_CASE("profiled budget and fragmentation buffer arithmetic") {
  ProfiledBudget b;
  b.requested = 71 * GiB;
  b.weights = 15 * GiB;
  b.activation_peak = 3 * GiB;
  b.non_torch_increase = 64 * MiB;
  b.margin = 150 * MiB;
  CHECK(b.kv_bytes() == static_cast<std::int64_t>(53 * GiB - 214 * MiB));
  b.buffer = 10 * GiB;
  b.requested = 20 * GiB;
  CHECK(b.kv_bytes() < 0);
  // max(floor, k × fragmentation)
  CHECK(fragmentation_buffer_bytes(50 * MiB, 2.0, 150 * MiB) == 150 * MiB);
  CHECK(fragmentation_buffer_bytes(452 * MiB, 2.0, 150 * MiB) == 904 * MiB);
  CHECK(fragmentation_buffer_bytes(100 * MiB, 0.0, 0) == 0);
}

TEST_CASE("workspace_aware: the three-region solve equals a brute-force search") {
  // aiter, Llama-3.1-8B: 8.125 MiB per request at 131,072 tokens (§2.5); pool clamp 2048..4096.
  engine::ClampedWorkspace w{engine::aiter_workspace_bytes(1, 32, 128, 131072), 131072};
  const Bytes cell = 128 * KiB;
  // Region 1: the pool at 2048 requests (16.25 GiB). 20.89 GiB: 4.64 GiB of KV.
  const auto budget1 = static_cast<std::int64_t>(20.89 * static_cast<double>(GiB));
  CHECK(three_region_kv_tokens(budget1, cell, 1, w) == brute_force(budget1, cell, 1, w));
  CHECK(w.requests(three_region_kv_tokens(budget1, cell, 1, w)) == 2048);
  // Region 2: 4096 requests need 1,048,576 tokens; between, the pool grows with the capacity.
  const auto budget2 = static_cast<std::int64_t>(150.0 * static_cast<double>(GiB));
  const std::int64_t t2 = three_region_kv_tokens(budget2, cell, 1, w);
  CHECK(t2 == brute_force(budget2, cell, 1, w));
  CHECK(w.requests(t2) > 2048);
  CHECK(w.requests(t2) < 4096);
  // Region 3: the pool at 4096 (32.5 GiB).
  const auto budget3 = static_cast<std::int64_t>(200.0 * static_cast<double>(GiB));
  const std::int64_t t3 = three_region_kv_tokens(budget3, cell, 16, w);
  CHECK(t3 == brute_force(budget3, cell, 16, w));
  CHECK(w.requests(t3) == 4096);
  // Nothing fits: the workspace alone exceeds the budget.
  CHECK(three_region_kv_tokens(static_cast<std::int64_t>(16 * GiB), cell, 1, w) == 0);
  // Property: random budgets, cells, contexts and blocks.
  std::mt19937_64 rng(42);
  for (int i = 0; i < 2000; ++i) {
    engine::ClampedWorkspace r{static_cast<Bytes>(rng() % (16 * MiB) + 1), static_cast<std::int64_t>(rng() % 200000 + 512)};
    const Bytes c = rng() % (256 * KiB) + 1024;
    const int block = (rng() % 2) ? 1 : 16;
    const auto budget = static_cast<std::int64_t>(rng() % (300 * GiB));
    INFO("budget " << budget << " cell " << c << " per_request " << r.per_request << " ctx " << r.context_len);
    REQUIRE(three_region_kv_tokens(budget, c, block, r) == brute_force(budget, c, block, r));
  }
}

TEST_CASE("profiled equals vLLM's own accounting, and fragmentation_buffer gives up max(150 MiB, 2 × fragmentation)") {
  engine::Deployment d = on("h100-sxm-80gb");
  engine::VllmConfig c;
  engine::StartupResult own = engine::start_engine(d, c);
  REQUIRE(own.ok);
  PolicyStart p = make_policy(spec(PolicyKind::profiled))->start(d, c);
  REQUIRE(p.startup.ok);
  CHECK(p.startup.kv_tokens == own.kv_tokens);
  // README's §8 figure: 27,008 blocks before the sampler's sort scratch, less its 10 B × 1024 ×
  // 128,256 = 1.22 GiB at 2 MiB a block (626 blocks), less the 32 MiB rotary cos_sin_cache vLLM
  // builds among the weights (16 blocks; serving-memory-model.md §10): 26,366 blocks.
  CHECK(p.startup.kv_tokens == 421856);
  CHECK(p.startup.kv_sized_by_policy);
  PolicyStart f = make_policy(spec(PolicyKind::fragmentation_buffer))->start(d, c);
  REQUIRE(f.startup.ok);
  const Bytes given_up = static_cast<Bytes>(own.kv_tokens - f.startup.kv_tokens) * 128 * KiB;
  CHECK(given_up >= 150 * MiB);
  CHECK(given_up < 2 * GiB);
  // A fixed margin takes its bytes (to the block) off the KV cache.
  PolicySpec margin = spec(PolicyKind::profiled);
  margin.margin = 150 * MiB;
  PolicyStart m = make_policy(margin)->start(d, c);
  CHECK(own.kv_tokens - m.startup.kv_tokens == 1200);  // 150 MiB / 128 KiB per token
}

TEST_CASE("auto_profile: a stress that fits takes one attempt and holds the 256 MiB canary") {
  engine::Deployment d = on("h100-sxm-80gb");
  engine::LightllmConfig c;
  PolicyStart p = make_policy(spec(PolicyKind::auto_profile))->start(d, c);
  REQUIRE(p.startup.ok);
  CHECK(p.attempts == 1);
  REQUIRE(p.startup.memory.canary != nullptr);
  CHECK(p.startup.bytes.canary == 256 * MiB);
  // The probe: max(8192, batch_max_tokens 8448 + graph batch 256) tokens.
  CHECK(p.attempted_kv_tokens.front() == 8704);
}

TEST_CASE("auto_profile: mem_fraction defaults to 0.95, the target floor(budget × 0.95 / cell)") {
  // PR #1273's final default (commit 23310168d, lightllm/server/api_cli.py): 5% of the measured budget
  // kept back for what the stress does not cover.
  CHECK(PolicySpec{}.mem_fraction == 0.95);
  engine::Deployment d = on("h100-sxm-80gb");
  engine::LightllmConfig c;
  PolicyStart p = make_policy(spec(PolicyKind::auto_profile))->start(d, c);
  PolicySpec full_spec = spec(PolicyKind::auto_profile);
  full_spec.mem_fraction = 1.0;
  PolicyStart full = make_policy(full_spec)->start(d, c);
  REQUIRE(p.startup.ok);
  REQUIRE(full.startup.ok);
  REQUIRE(p.kv_budget.has_value());
  REQUIRE(p.attempted_kv_tokens.size() == 2);  // the probe, then the one target that fits
  // The default model on LightLLM: 2 (K, V) × 8 KV heads × 128 × 32 layers × 2 B = 128 KiB a token.
  const Bytes cell = 128 * KiB;
  CHECK(std::get<engine::LightllmFigures>(p.startup.figures).cell == cell);
  // Both measure the same budget; the target is floor(budget × mem_fraction / cell).
  CHECK(p.kv_budget == full.kv_budget);
  const auto budget = static_cast<double>(*p.kv_budget);
  CHECK(p.attempted_kv_tokens[1] == static_cast<std::int64_t>(std::floor(budget * 0.95 / static_cast<double>(cell))));
  CHECK(full.attempted_kv_tokens[1] == static_cast<std::int64_t>(std::floor(budget / static_cast<double>(cell))));
  CHECK(p.startup.kv_tokens < full.startup.kv_tokens);
}

TEST_CASE("auto_profile: shrinks 5% exactly as often as its stress needs, and gives up after 3 retries") {
  // aiter's workspace grows with the request pool, itself a clamp of the KV capacity (§2.5): the
  // probe measures it at 2048 requests, the target allocates 4096, so the first attempts OOM.
  engine::Deployment d = on("mi300x");
  engine::SglangConfig c;
  PolicySpec s = spec(PolicyKind::auto_profile);
  PolicyStart p = make_policy(s)->start(d, c);
  REQUIRE(p.attempts > 1);
  REQUIRE(p.startup.ok);
  const int retries = p.attempts - 1;
  // Each retry is 5% below the last; the attempt before the last fails, the last starts.
  for (std::size_t i = 2; i < p.attempted_kv_tokens.size(); ++i)
    CHECK(p.attempted_kv_tokens[i] == static_cast<std::int64_t>(std::floor(static_cast<double>(p.attempted_kv_tokens[i - 1]) * 0.95)));
  auto starts_with = [&](std::int64_t tokens) {
    engine::StartupDirectives fixed;
    fixed.kv_sizer = [tokens](engine::KvSizingInputs&) -> engine::KvSizing { return tokens; };
    fixed.canary = 256 * MiB;
    engine::StartupResult r = engine::start_engine(d, c, fixed);
    return r.ok && engine::stress(r, d, 16384, 512).ok;
  };
  CHECK_FALSE(starts_with(p.attempted_kv_tokens[p.attempted_kv_tokens.size() - 2]));
  CHECK(starts_with(p.attempted_kv_tokens.back()));
  // With 1% shrinks, three retries are not enough: it gives up after 4 attempts, naming the knobs.
  s.shrink = 0.01;
  s.max_retries = 3;
  PolicyStart g = make_policy(s)->start(d, c);
  CHECK_FALSE(g.startup.ok);
  CHECK(g.attempts == 4);
  CHECK(g.startup.failure.find("auto-profile gave up after 4 attempts") != std::string::npos);
  CHECK(g.startup.failure.find("--chunked-prefill-size") != std::string::npos);
  INFO("retries needed at 5%: " << retries);
}

TEST_CASE("workspace_cap bounds aiter's partitions by the KV capacity, and release_on_oom holds a canary") {
  engine::Deployment d = on("mi300x");
  d.other_processes = 165 * GiB;
  engine::SglangConfig c;
  PolicyStart own = make_policy(spec(PolicyKind::engine))->start(d, c);
  PolicyStart cap = make_policy(spec(PolicyKind::workspace_cap))->start(d, c);
  REQUIRE(cap.startup.ok);
  // 2048 requests × 32 heads × ceil(kv/256) partitions × 520 B instead of 512 partitions.
  const std::int64_t partitions = (cap.startup.kv_tokens + 255) / 256;
  CHECK(cap.startup.forward.attention_workspace == static_cast<Bytes>(2048 * 32 * partitions * 520));
  CHECK_FALSE(own.startup.ok);
  CHECK(own.startup.stage == engine::StartupStage::attention_workspace);

  engine::Deployment h = on("h100-sxm-80gb");
  PolicyStart g = make_policy(spec(PolicyKind::release_on_oom))->start(h, engine::VllmConfig{});
  REQUIRE(g.startup.ok);
  CHECK(g.release_canary_on_oom);
  CHECK(g.startup.bytes.canary == 256 * MiB);
}

TEST_CASE("policy parameters out of range are errors naming the policy") {
  PolicySpec s = spec(PolicyKind::static_fraction);
  s.fraction = 1.5;
  CHECK_THROWS_WITH(make_policy(s), Catch::Contains("fraction must be in (0, 1]"));
  s = spec(PolicyKind::auto_profile);
  s.shrink = 1.0;
  CHECK_THROWS_WITH(make_policy(s), Catch::Contains("shrink must be in (0, 1)"));
  s = spec(PolicyKind::allocator);
  s.alloc_conf = "max_split_size_mb:2";
  CHECK_THROWS_WITH(make_policy(s), Catch::Contains("max_split_size_mb"));
}

TEST_CASE("profiled with PR #30515's graph estimate takes first + second × (n − 1) off the KV cache") {
  engine::Deployment d = on("h100-sxm-80gb");
  engine::VllmConfig c;
  PolicyStart plain = make_policy(spec(PolicyKind::profiled))->start(d, c);
  PolicySpec s = spec(PolicyKind::profiled);
  s.cudagraph_estimate = true;
  PolicyStart est = make_policy(s)->start(d, c);
  REQUIRE(plain.startup.ok);
  REQUIRE(est.startup.ok);
  // 51 piecewise + 51 full sizes share one pool, so the estimate over-counts (§1.5, #45178): it is
  // larger than the pool the real capture reserves.
  const Bytes taken = static_cast<Bytes>(plain.startup.kv_tokens - est.startup.kv_tokens) * 128 * KiB;
  CHECK(taken > est.startup.bytes.graph_pool);
  REQUIRE(est.notes.size() == 1);
  CHECK(est.notes.front().find("graph estimate") != std::string::npos);
}
