// Test helper: reads a snapshot (pickle or JSON) with headroom's reader and writes it with
// headroom's writer, JSON when OUT ends in ".json", else a pickle. Used by the ctest that loads
// the written files with Python (check_written_snapshot.py).
#include <exception>
#include <iostream>
#include <string>

#include "sim/allocator/snapshot.hpp"
#include "sim/core/error.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: snapshot_convert IN OUT(.json|.pickle)\n";
    return 2;
  }
  try {
    const auto snapshot = headroom::alloc::read_snapshot(argv[1]);
    const std::string out = argv[2];
    if (out.size() >= 5 && out.substr(out.size() - 5) == ".json") {
      headroom::alloc::write_snapshot_json(snapshot, out);
    } else {
      headroom::alloc::write_snapshot_pickle(snapshot, out);
    }
  } catch (const headroom::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
