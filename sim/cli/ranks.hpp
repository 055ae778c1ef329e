#pragma once
// The processes of one sweep: a single process, or the ranks `mpirun -n N headroom sweep ...` starts
// (sim/cli/ranks_mpi.cpp, built only when CMake finds MPI; sim/cli/ranks_local.cpp otherwise).
#include <cstddef>
#include <string>
#include <vector>

namespace headroom::cli {

class Ranks {
 public:
  // Joins the MPI job when launched by mpirun (or srun) in an MPI build; a single rank otherwise.
  // Launched by mpirun with several ranks in a build without MPI: InputError, rather than every
  // process running the whole sweep.
  Ranks();
  ~Ranks();  // MPI_Finalize
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;

  static bool built_with_mpi();
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Ranks on this machine (the default threads per rank share its cores).
  int local_size() const { return local_size_; }

  // Rank 0's `values`, on every rank.
  std::vector<std::size_t> broadcast(const std::vector<std::size_t>& values) const;
  // On rank 0: every rank's `items` (rank 0's first, then rank 1's, ...); elsewhere: empty.
  std::vector<std::string> gather(const std::vector<std::string>& items) const;
  // Ends every rank of the job with `code` (after an error on one of them).
  [[noreturn]] void abort(int code) const;

 private:
  int rank_ = 0;
  int size_ = 1;
  int local_size_ = 1;
  bool mpi_ = false;
};

// The world size a launcher announces in the environment (Open MPI, MPICH/Hydra, PMIx), or 1.
int launcher_world_size();

}  // namespace headroom::cli
