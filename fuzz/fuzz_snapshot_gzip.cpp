// Fuzz target: a snapshot file's bytes as `headroom replay FILE` reads them (read_snapshot_bytes):
// gzip detected by its magic number and decompressed (sim/core/gzip.hpp, capped at the snapshot
// limit), then the pickle or JSON reader. The seeds are gzip files of the other two targets' seeds,
// so mutations land in the gzip header, the deflate data and the CRC-32/length trailer. A snapshot
// that reads must write and read back the same (support/snapshot_round_trip.hpp).
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "fuzz/support/scratch_file.hpp"
#include "fuzz/support/snapshot_round_trip.hpp"
#include "sim/allocator/snapshot.hpp"
#include "sim/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    std::string bytes(headroom::fuzz::as_text(data, size));
    headroom::fuzz::check_snapshot_round_trip(headroom::alloc::read_snapshot_bytes(std::move(bytes), "fuzz.pickle.gz"));
  } catch (const headroom::InputError&) {
  }
  return 0;
}
