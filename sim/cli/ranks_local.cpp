// Ranks in a build without MPI: one process. Under `mpirun -n N` (N > 1) each process would run the
// whole sweep and write the same files, so that is refused with the way to get an MPI build.
#include <cstdlib>

#include <fmt/format.h>

#include "sim/cli/ranks.hpp"
#include "sim/core/error.hpp"

namespace headroom::cli {

Ranks::Ranks() {
  if (int n = launcher_world_size(); n > 1)
    throw InputError(fmt::format(
        "started as one of {} MPI ranks, but this headroom was built without MPI: `mpirun headroom sweep` needs an "
        "MPI build (install libopenmpi-dev and openmpi-bin, then configure again: CMake finds MPI), or run "
        "`headroom sweep` alone to use every local core",
        n));
}

Ranks::~Ranks() = default;

bool Ranks::built_with_mpi() { return false; }

std::vector<std::size_t> Ranks::broadcast(const std::vector<std::size_t>& values) const { return values; }

std::vector<std::string> Ranks::gather(const std::vector<std::string>& items) const { return items; }

void Ranks::abort(int code) const { std::exit(code); }

}  // namespace headroom::cli
