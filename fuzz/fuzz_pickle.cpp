// Fuzz target: the data-only unpickler (sim/allocator/pickle_reader) and a snapshot read from its
// tree (read_snapshot_pickle), as `headroom replay FILE.pickle` reads a _dump_snapshot() file.
// Every node of a parsed tree is visited through the accessors the snapshot reader uses; a
// snapshot that reads must write and read back the same (support/snapshot_round_trip.hpp).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/support/scratch_file.hpp"
#include "fuzz/support/snapshot_round_trip.hpp"
#include "sim/allocator/pickle_reader.hpp"
#include "sim/core/error.hpp"

namespace {

using namespace headroom::alloc::pickle;

void visit_every_node(const Tree& tree) {
  for (NodeId id = 0; id < tree.size(); ++id) {
    switch (tree.kind(id)) {
      case Kind::Int:
        (void)tree.int64(id);
        (void)tree.uint64(id);
        break;
      case Kind::Float: (void)tree.real(id); break;
      case Kind::Str:
      case Kind::Bytes: (void)tree.text(id); break;
      case Kind::Dict: (void)tree.find(id, "segments"); [[fallthrough]];
      case Kind::List:
      case Kind::Tuple:
        for (NodeId item : tree.items(id)) headroom::fuzz::require(item < tree.size(), "a container holds a node id out of range");
        break;
      default: break;
    }
    (void)python_type_name(tree.kind(id));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(headroom::fuzz::as_text(data, size));
  try {
    const Tree tree = parse(bytes, "fuzz.pickle");
    headroom::fuzz::require(tree.size() > 0 && tree.root() < tree.size(), "a parsed pickle has no root");
    visit_every_node(tree);
  } catch (const headroom::InputError&) {
  }
  try {
    headroom::fuzz::check_snapshot_round_trip(headroom::alloc::read_snapshot_pickle(bytes, "fuzz.pickle"));
  } catch (const headroom::InputError&) {
  }
  return 0;
}
