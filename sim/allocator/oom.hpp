#pragma once
// What PyTorch reports when the caching allocator gives up (spec §3 step 9).
#include <optional>
#include <string>
#include <string_view>

#include "sim/core/units.hpp"

namespace headroom::alloc {

// The PyTorch releases whose OOM text headroom writes, newest last. Only texts that are sourced
// are here: 2.11 from the messages PyTorch 2.11.0+cu130 raised on an H100 (../shared/gpu,
// oom_fraction030_s34.meta.json), which match c10/cuda/CUDACachingAllocator.cpp after PR #172327.
enum class PytorchRelease { v2_11 };
inline constexpr PytorchRelease kNewestPytorch = PytorchRelease::v2_11;

// "2.11" (also "2.11.0", "2.11.0+cu130"); anything else is an InputError naming `what` and the
// releases headroom knows.
PytorchRelease parse_pytorch_release(std::string_view text, std::string_view what);
const char* to_string(PytorchRelease release);  // "2.11"

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
  PytorchRelease pytorch = kNewestPytorch;  // whose text message() writes

  // "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of ..."
  std::string message(bool hip = false) const;
};

}  // namespace headroom::alloc
