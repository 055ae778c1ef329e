// tune's whole-number knobs (issue 16): the requests and the tokens of one step under each engine's
// own name, set into the engine's configuration, printed as the engine's flag, and refused when they
// are another engine's, not whole, or past the engine's own rules.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/core/error.hpp"
#include "sim/engine/engine_registry.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/tune.hpp"

using namespace headroom;

namespace {

scenario::Scenario knob_scenario(const std::string& engine) {
  return scenario::parse_scenario("name: knobs\n"
                                  "gpu: {profile: h100-sxm-80gb}\n"
                                  "model: {name: Llama-3.1-8B}\n"
                                  "engine: {kind: " + engine + "}\n"
                                  "workload: {synthetic: {requests: 4, arrivals: {process: poisson, rate: 1}, "
                                  "input: {dist: fixed, value: 100}, output: {dist: fixed, value: 10}}}\n",
                                  "knobs.yaml", "/tmp");
}

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("tune knobs: each engine's requests and tokens of a step, set and printed in its own spelling") {
  // The flags as the engines' argument parsers spell them (sim/engine/<engine>_flags.cpp).
  struct Case {
    const char* engine;
    const char* knob;
    const char* flag;
  };
  for (const Case& c : {Case{"vllm", "max_num_seqs", "--max-num-seqs 256"},
                        Case{"vllm", "max_num_batched_tokens", "--max-num-batched-tokens 256"},
                        Case{"sglang", "max_running_requests", "--max-running-requests 256"},
                        Case{"sglang", "chunked_prefill_size", "--chunked-prefill-size 256"},
                        Case{"lightllm", "running_max_req_size", "--running_max_req_size 256"},
                        Case{"lightllm", "batch_max_tokens", "--batch_max_tokens 256"}}) {
    INFO(c.knob);
    scenario::Scenario sc = knob_scenario(c.engine);
    const scenario::KnobInfo k = scenario::knob_info(sc, c.knob);
    CHECK(k.whole);
    CHECK(k.higher_is_aggressive);
    CHECK_FALSE(k.fraction);
    CHECK(scenario::engine_flag(sc, c.knob, 256) == c.flag);
    scenario::set_knob(sc, c.knob, 256);
    // The engine's own knobs as the scenario writes them back (before resolving them).
    YAML::Emitter e;
    e << YAML::BeginMap;
    engine::engine_traits(sc.engine).write_knobs(e, sc.engine);
    e << YAML::EndMap;
    CHECK(std::string(e.c_str()).find(std::string(c.knob) + ": 256") != std::string::npos);
  }
  CHECK(scenario::engine_flag(knob_scenario("sglang"), "mem_fraction_static", 0.86) == "--mem-fraction-static 0.86");
}

TEST_CASE("tune knobs: another engine's knob, a fraction of a request, a value the engine refuses are bad input") {
  const scenario::Scenario sglang = knob_scenario("sglang"), vllm = knob_scenario("vllm");
  CHECK(error_of([&] { scenario::knob_info(sglang, "max_num_seqs"); }) ==
        "--knob max_num_seqs: a knob of vllm, and this scenario's engine is sglang; sglang's knobs are "
        "mem_fraction_static, max_running_requests, chunked_prefill_size");
  CHECK(error_of([&] { scenario::knob_info(vllm, "max_num_seq"); })
            .starts_with("--knob: unknown knob 'max_num_seq'; did you mean 'max_num_seqs'?"));
  scenario::Scenario s = vllm;
  CHECK(error_of([&] { scenario::set_knob(s, "max_num_seqs", 2.5); }) ==
        "--knob max_num_seqs: 2.5 is not a whole number of at least 1");
  CHECK(error_of([&] { scenario::check_tune_inputs(vllm, "max_num_seqs", 0.5, 8, 4, {}); }) ==
        "--range: max_num_seqs takes whole numbers of at least 1, got 0.5:8");
  CHECK(error_of([&] { scenario::check_tune_inputs(vllm, "max_num_seqs", 1, 8, 4, {.resolution = 0.5, .margin = std::nullopt}); }) ==
        "--resolution: max_num_seqs takes whole numbers: expected a whole number of at least 1, got 0.5");
  // vLLM refuses max_num_seqs above max_num_batched_tokens (8,192 on an H100 by default, §1.3).
  CHECK_THAT(error_of([&] { scenario::check_tune_inputs(vllm, "max_num_seqs", 256, 16384, 2, {}); }),
             Catch::StartsWith("--range 256:16384: at max_num_seqs = 16384: ") &&
                 Catch::EndsWith("vllm max_num_batched_tokens: 8192 must be at least max_num_seqs (16384)"));
  // The grid in whole numbers, each once: 16 points over 1..4.
  CHECK(scenario::check_tune_inputs(vllm, "max_num_seqs", 1, 4, 16, {}) == std::vector<double>{1, 2, 3, 4});
  CHECK(scenario::check_tune_inputs(vllm, "max_num_seqs", 64, 512, 3, {}) == std::vector<double>{64, 288, 512});

  const auto [knob, values] = scenario::parse_with(vllm, "gpu_memory_utilization", "max_num_seqs=512,128,256");
  CHECK(knob == "max_num_seqs");
  CHECK(values == std::vector<double>{128, 256, 512});
  CHECK(error_of([&] { scenario::parse_with(vllm, "gpu_memory_utilization", "max_running_requests=8"); })
            .starts_with("--with max_running_requests: a knob of sglang, and this scenario's engine is vllm"));
  CHECK(error_of([&] { scenario::parse_with(vllm, "max_num_seqs", "max_num_batched_tokens=4"); }) ==
        "--with max_num_batched_tokens = 4: vllm max_num_batched_tokens: 4 must be at least max_num_seqs (1024)");
}
