// Whether an MPI launcher started this process: the world size it announces in the environment.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "sim/cli/ranks.hpp"

namespace headroom::cli {

int launcher_world_size() {
  // Open MPI's mpirun, MPICH's Hydra (and Slurm's PMI), PMIx launchers.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    const char* v = std::getenv(name);
    if (!v || !*v) continue;
    try {
      return std::max(1, std::stoi(v));
    } catch (...) {
      return 1;
    }
  }
  return 1;
}

}  // namespace headroom::cli
