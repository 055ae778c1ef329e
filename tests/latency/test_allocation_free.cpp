// The simulator times every step: step_time must not allocate. This executable counts calls to
// the global operator new (replaced below, for this test binary only) around a step.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <new>

#include "sim/device/gpu_profile.hpp"
#include "sim/latency/step_latency.hpp"
#include "sim/model/catalogue.hpp"

namespace {
std::size_t allocations = 0;
}

void* operator new(std::size_t size) {
  ++allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
// The nothrow form too: Catch2 allocates its test registry with new(std::nothrow) and frees it with
// the operator delete above, so both must come from the same malloc (under AddressSanitizer, whose
// runtime supplies every operator new not replaced here, they would not: alloc-dealloc-mismatch).
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return ::operator new(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

using namespace headroom;
using namespace headroom::latency;

TEST_CASE("timing a step allocates nothing") {
  for (const char* name : {"Llama-3.1-8B", "Qwen3-30B-A3B", "DeepSeek-V3"}) {
    INFO(name);
    const std::size_t at_start = allocations;
    const model::ModelConfig config = model::catalogue_model(name);
    const bool fp8 = config.quantization.method == model::WeightQuantization::Method::fp8_block;
    const StepLatencyModel m(config, fp8 ? 8 : 1, model::KvCacheDtype::model,
                             fp8 ? model::DType::fp8 : model::DType::bf16, device::load_gpu_profile("h100-sxm-80gb"));
    CHECK(allocations > at_start);  // the counter sees the model being built
    Batch b;
    b.add_prefill(512, 4096);
    for (int i = 0; i < 200; ++i) b.add_decode(1000 + i);
    const std::size_t before = allocations;
    const Seconds t = m.step_time(b);
    const StepTime by_term = m.step_time_by_term(b);
    const std::size_t after = allocations;
    CHECK(after == before);
    CHECK(t > 0);
    CHECK(by_term.total() == Approx(t));
  }
}
