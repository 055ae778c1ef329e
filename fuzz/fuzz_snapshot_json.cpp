// Fuzz target: a snapshot in its JSON form (read_snapshot_json, as `headroom replay FILE.json`
// reads it). A snapshot that reads must write and read back the same
// (support/snapshot_round_trip.hpp).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/support/scratch_file.hpp"
#include "fuzz/support/snapshot_round_trip.hpp"
#include "sim/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const std::string text(headroom::fuzz::as_text(data, size));
    headroom::fuzz::check_snapshot_round_trip(headroom::alloc::read_snapshot_json(text, "fuzz.json"));
  } catch (const headroom::InputError&) {
  }
  return 0;
}
