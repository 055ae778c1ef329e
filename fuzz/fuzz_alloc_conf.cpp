// Fuzz target: PYTORCH_CUDA_ALLOC_CONF strings (parse_alloc_conf). A string that parses has a
// canonical form that parses to the same configuration (to_string's contract), and the derived
// figures the allocator uses (divisions per size) are defined for every size class.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/support/finding.hpp"
#include "fuzz/support/scratch_file.hpp"
#include "sim/allocator/alloc_config.hpp"
#include "sim/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace headroom::alloc;
  using headroom::fuzz::require;
  try {
    const AllocatorConfig config = parse_alloc_conf(headroom::fuzz::as_text(data, size), "fuzz");
    const std::string canonical = to_string(config);
    const AllocatorConfig again = parse_alloc_conf(canonical, "canonical form");
    require(to_string(again) == canonical, "the canonical form does not parse back to itself: " + canonical);
    require(again.max_split_size == config.max_split_size && again.large_segment_size == config.large_segment_size &&
                again.max_non_split_rounding_size == config.max_non_split_rounding_size &&
                again.roundup_power2_divisions == config.roundup_power2_divisions &&
                again.garbage_collection_threshold == config.garbage_collection_threshold &&
                again.expandable_segments == config.expandable_segments &&
                again.per_process_memory_fraction == config.per_process_memory_fraction,
            "the canonical form parses to another configuration: " + canonical);
    for (headroom::Bytes n = 1; n != 0 && n < (headroom::Bytes{1} << 62); n <<= 1) (void)config.divisions_for(n);
  } catch (const headroom::InputError&) {
  }
  return 0;
}
