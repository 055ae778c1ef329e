#pragma once
// What PyTorch reports when the caching allocator gives up (spec §3 step 9).
#include <optional>
#include <string>

#include "sim/core/units.hpp"

namespace headroom::alloc {

struct OomInfo {
  int device = 0;
  StreamId stream = 0;
  Bytes requested = 0;        // the caller's unrounded size
  Bytes rounded = 0;          // round_size(requested): the `size` of the trace's oom entry
  Bytes alloc_size = 0;       // segment size: what "Tried to allocate" prints
  Bytes total = 0;            // cudaMemGetInfo total
  Bytes free = 0;             // cudaMemGetInfo free, after every release
  std::optional<Bytes> allowed;  // floor(fraction x total) when a fraction is set
  Bytes allocated = 0;        // allocated_bytes.all.current
  Bytes reserved = 0;         // reserved_bytes.all.current
  Bytes private_pool_free = 0;   // free cached blocks in private pools ("allocated in private pools")
  Bytes process_in_use = 0;   // this process's device memory incl. the context (NVML line)
  bool more_than_1eb = false; // request >= 2^60: fails up front

  // "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of ..."
  std::string message(bool hip = false) const;
};

}  // namespace headroom::alloc
