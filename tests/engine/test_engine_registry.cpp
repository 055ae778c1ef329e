// The engine registry (engine_registry.hpp): every engine is described completely and once, and the
// three look-ups (name, id, configuration) agree.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "sim/core/error.hpp"
#include "sim/engine/engine_registry.hpp"

using namespace headroom;
using namespace headroom::engine;

TEST_CASE("every registered engine is described completely, under its own names") {
  std::set<std::string> names, labels, knobs, flags;
  for (const EngineTraits* t : engines()) {
    INFO(t->name);
    CHECK(!t->label.empty());
    CHECK(!t->capacity_flags.empty());
    CHECK(t->fraction_flag.starts_with("--"));
    CHECK(t->kv_pool.engine == t->name);
    CHECK(t->holds);
    CHECK(t->fraction);
    CHECK(t->started_fraction);
    CHECK(t->set_fraction);
    CHECK(t->kv_cache_dtype);
    CHECK(t->static_fraction_tokens);
    CHECK(t->fraction_kv_bytes);
    CHECK(t->read_knobs);
    CHECK(t->write_knobs);
    CHECK(t->start);
    CHECK(t->make_scheduler);
    names.emplace(t->name);
    labels.emplace(t->label);
    knobs.emplace(t->fraction_knob);
    flags.emplace(t->fraction_flag);
  }
  CHECK(names.size() == engines().size());
  CHECK(labels.size() == engines().size());
  CHECK(knobs.size() == engines().size());
  CHECK(flags.size() == engines().size());
}

TEST_CASE("the registry finds an engine by name, id and configuration alike") {
  for (const EngineConfig& config : {EngineConfig{VllmConfig{}}, EngineConfig{SglangConfig{}},
                                     EngineConfig{LightllmConfig{}}}) {
    const EngineTraits& t = engine_traits(config);
    INFO(t.name);
    CHECK(t.holds(config));
    CHECK(&engine_traits(t.id) == &t);
    CHECK(find_engine(t.name) == &t);
    CHECK(&engine_named(t.name, "kind") == &t);
    CHECK(engine_with_fraction_knob(t.fraction_knob) == &t);
    CHECK(engine_of(config) == t.id);
  }
  CHECK(find_engine("trtllm") == nullptr);
  CHECK(engine_with_fraction_knob("policy.fraction") == nullptr);
  CHECK_THROWS_WITH(engine_named("trtllm", "--engine"),
                    "--engine: expected one of vllm, sglang, lightllm, got 'trtllm'");
}

TEST_CASE("each engine's memory-fraction knob is spelled as the engine spells it") {
  CHECK(engine_traits(model::Engine::vllm).fraction_flag == "--gpu-memory-utilization");
  CHECK(engine_traits(model::Engine::sglang).fraction_flag == "--mem-fraction-static");
  CHECK(engine_traits(model::Engine::lightllm).fraction_flag == "--mem_fraction");
  // SGLang's share is of the memory free before the weights (§2.2), the others' of the device.
  CHECK(engine_traits(model::Engine::sglang).fraction_of_free_memory);
  CHECK_FALSE(engine_traits(model::Engine::vllm).fraction_of_free_memory);
  CHECK_FALSE(engine_traits(model::Engine::lightllm).fraction_of_free_memory);
  EngineConfig c = SglangConfig{};
  engine_traits(c).set_fraction(c, 0.8);
  CHECK(engine_traits(c).fraction(c) == 0.8);
}
