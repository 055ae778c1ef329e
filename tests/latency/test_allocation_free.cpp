// The simulator times every step: step_time must not allocate. This executable counts calls to
// the global operator new (tests/support/allocation_counter.cpp) around a step.
#include <catch2/catch.hpp>

#include "sim/device/gpu_profile.hpp"
#include "sim/latency/step_latency.hpp"
#include "sim/model/catalogue.hpp"
#include "tests/support/allocation_counter.hpp"

using namespace headroom;
using namespace headroom::latency;

TEST_CASE("timing a step allocates nothing") {
  for (const char* name : {"Llama-3.1-8B", "Qwen3-30B-A3B", "DeepSeek-V3"}) {
    INFO(name);
    const std::size_t at_start = headroom::test::heap_allocations();
    const model::ModelConfig config = model::catalogue_model(name);
    const bool fp8 = config.quantization.method == model::WeightQuantization::Method::fp8_block;
    const device::GpuProfile gpu = device::load_gpu_profile("h100-sxm-80gb");
    StepLatencyModel m(config, fp8 ? 8 : 1, model::KvCacheDtype::model, fp8 ? model::DType::fp8 : model::DType::bf16,
                       gpu);
    // DeepSeek-V3 at tp 8 and pp 2: its all-reduces, logits all-gather and pipeline hand-over too.
    if (fp8) m.set_communication(StepCommunication(config, ParallelCommunication{8, 2, true, 8 * MiB}, gpu));
    CHECK(headroom::test::heap_allocations() > at_start);  // the counter sees the model being built
    Batch b;
    b.add_prefill(512, 4096);
    for (int i = 0; i < 200; ++i) b.add_decode(1000 + i);
    GemmTermCache cache;  // sized when made, as the serving loop's is
    const std::size_t before = headroom::test::heap_allocations();
    const Seconds t = m.step_time(b);
    const StepTime by_term = m.step_time_by_term(b);
    const Seconds cached = m.step_time(b, cache) + m.step_time(b, cache);  // filled, then found
    const std::size_t after = headroom::test::heap_allocations();
    CHECK(cached == 2 * t);
    CHECK(after == before);
    CHECK(t > 0);
    CHECK(by_term.total() == Approx(t));
    CHECK((by_term.communication > 0) == fp8);
  }
}
