#pragma once
// What a snapshot read from fuzz input must satisfy: written again (pickle and JSON), it reads
// back to the same snapshot, so `headroom replay --export` never writes a file it cannot read.
#include <string>

#include "fuzz/support/finding.hpp"
#include "sim/allocator/snapshot.hpp"

namespace headroom::fuzz {

inline void check_snapshot_round_trip(const alloc::Snapshot& snapshot) {
  const std::string pickle = alloc::snapshot_to_pickle_bytes(snapshot);
  const std::string json = alloc::snapshot_to_json_text(snapshot);
  const alloc::Snapshot from_pickle = alloc::read_snapshot_pickle(pickle, "round-trip.pickle");
  const alloc::Snapshot from_json = alloc::read_snapshot_json(json, "round-trip.json");
  require(alloc::snapshot_to_pickle_bytes(from_pickle) == pickle, "the written pickle does not read back the same");
  require(alloc::snapshot_to_json_text(from_json) == json, "the written JSON does not read back the same");
}

}  // namespace headroom::fuzz
