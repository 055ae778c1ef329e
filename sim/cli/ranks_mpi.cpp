// Ranks of an MPI job (built only when CMake finds MPI; HEADROOM_WITH_MPI). All of headroom's MPI
// calls are here: joining the job, the ranks on this machine, broadcasting the points to run, and
// gathering finished points on rank 0.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include <mpi.h>

#include "sim/cli/ranks.hpp"

namespace headroom::cli {

namespace {

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string(what) + " failed");
}

}  // namespace

Ranks::Ranks() {
  // A plain `headroom sweep` stays a single process: MPI joins only when a launcher started us.
  if (launcher_world_size() <= 1 && !std::getenv("OMPI_COMM_WORLD_RANK")) return;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) check(MPI_Init(nullptr, nullptr), "MPI_Init");
  mpi_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm local;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
        "MPI_Comm_split_type");
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
}

Ranks::~Ranks() {
  if (mpi_) MPI_Finalize();
}

bool Ranks::built_with_mpi() { return true; }

std::vector<std::size_t> Ranks::broadcast(const std::vector<std::size_t>& values) const {
  if (!mpi_ || size_ == 1) return values;
  std::uint64_t n = values.size();
  check(MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
  std::vector<std::uint64_t> buf(values.begin(), values.end());
  buf.resize(n);
  if (n > 0) check(MPI_Bcast(buf.data(), static_cast<int>(n), MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return std::vector<std::size_t>(buf.begin(), buf.end());
}

std::vector<std::string> Ranks::gather(const std::vector<std::string>& items) const {
  if (!mpi_ || size_ == 1) return items;
  // Each rank's items as one buffer of (length, bytes) records; rank 0 receives every buffer.
  std::string mine;
  for (const std::string& s : items) {
    const std::uint64_t len = s.size();
    mine.append(reinterpret_cast<const char*>(&len), sizeof len);
    mine += s;
  }
  if (mine.size() > static_cast<std::size_t>(INT32_MAX)) throw std::runtime_error("gather: more than 2 GiB from one rank");
  int my_size = static_cast<int>(mine.size());
  std::vector<int> sizes(rank_ == 0 ? size_ : 0);
  check(MPI_Gather(&my_size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
  std::vector<int> offsets(sizes.size());
  std::int64_t total = 0;
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    offsets[r] = static_cast<int>(total);
    total += sizes[r];
  }
  if (total > INT32_MAX) throw std::runtime_error("gather: more than 2 GiB in all");
  std::string all(static_cast<std::size_t>(total), '\0');
  check(MPI_Gatherv(mine.data(), my_size, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0,
                    MPI_COMM_WORLD),
        "MPI_Gatherv");
  std::vector<std::string> out;
  for (std::size_t at = 0; at + sizeof(std::uint64_t) <= all.size();) {
    std::uint64_t len = 0;
    std::memcpy(&len, all.data() + at, sizeof len);
    at += sizeof len;
    out.push_back(all.substr(at, len));
    at += len;
  }
  return out;
}

void Ranks::abort(int code) const {
  if (mpi_) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

}  // namespace headroom::cli
