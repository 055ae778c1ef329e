#include "sim/allocator/oom.hpp"

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom::alloc {

PytorchRelease parse_pytorch_release(std::string_view text, std::string_view what) {
  std::string_view t = text;
  if (const std::size_t plus = t.find('+'); plus != std::string_view::npos) t = t.substr(0, plus);  // "+cu130"
  if (t == "2.11" || t == "2.11.0") return PytorchRelease::v2_11;
  throw InputError(fmt::format(
      "{}: PyTorch '{}' is not a release whose out-of-memory text headroom writes; expected 2.11 (the newest, "
      "the default); older releases' texts are not sourced (docs/replay-and-allocator.md)",
      what, text));
}

const char* to_string(PytorchRelease release) {
  switch (release) {
    case PytorchRelease::v2_11: return "2.11";
  }
  return "?";
}

std::string OomInfo::message(bool hip) const {
  const char* runtime = hip ? "HIP" : "CUDA";
  if (more_than_1eb) return fmt::format("{} out of memory. Tried to allocate more than 1EB memory.", runtime);
  // Text and order as PyTorch 2.11 raises it (CUDACachingAllocator.cpp's OutOfMemoryError, checked
  // byte for byte against ../shared/gpu's recorded messages); `P` is the free cached bytes of private
  // pools, which PyTorch (despite the wording) adds to the allocated figure.
  std::string proc = fmt::format("Including non-PyTorch memory, this process has {} memory in use. ",
                                 format_size(process_in_use));
  std::string allowed_info = allowed ? format_size(*allowed) + " allowed; " : std::string();
  std::string private_msg =
      private_pool_free > 0
          ? fmt::format("with {} allocated in private pools (e.g., CUDA Graphs), ", format_size(private_pool_free))
          : std::string();
  Bytes unallocated = reserved >= allocated + private_pool_free ? reserved - allocated - private_pool_free : 0;
  return fmt::format(
      "{} out of memory. Tried to allocate {}. GPU {} has a total capacity of {} of which {} is free. {}{}"
      "Of the allocated memory {} is allocated by PyTorch, {}and {} is reserved by PyTorch but unallocated. "
      "If reserved but unallocated memory is large try setting {}=expandable_segments:True to avoid "
      "fragmentation.  See documentation for Memory Management  "
      "(https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)",
      runtime, format_size(alloc_size), device, format_size(total), format_size(free), proc, allowed_info,
      format_size(allocated + private_pool_free), private_msg, format_size(unallocated),
      hip ? "PYTORCH_HIP_ALLOC_CONF" : "PYTORCH_CUDA_ALLOC_CONF");
}

}  // namespace headroom::alloc
