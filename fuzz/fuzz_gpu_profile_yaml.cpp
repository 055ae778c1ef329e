// Fuzz target: GPU profile YAML (parse_gpu_profile, as `gpu: profile: my.yaml` and `headroom fit`
// read it). A profile that parses must write (gpu_profile_yaml) and parse back to an equal
// profile, as `headroom fit` relies on when it writes fitted coefficients back.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/support/finding.hpp"
#include "fuzz/support/scratch_file.hpp"
#include "sim/core/error.hpp"
#include "sim/device/gpu_profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace headroom::device;
  GpuProfile profile;
  try {
    profile = parse_gpu_profile(headroom::fuzz::as_text(data, size), "fuzz.yaml");
  } catch (const headroom::InputError&) {
    return 0;
  }
  const std::string written = gpu_profile_yaml(profile);
  GpuProfile again;
  try {
    again = parse_gpu_profile(written, "written.yaml");
  } catch (const headroom::InputError& e) {
    headroom::fuzz::require(false, std::string("a profile's written YAML does not parse: ") + e.what() + "\n" + written);
  }
  headroom::fuzz::require(again == profile, "a profile's written YAML parses to another profile:\n" + written);
  (void)device_spec(profile);
  return 0;
}
