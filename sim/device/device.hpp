#pragma once
// One GPU as the caching allocator sees it: total memory, what the CUDA context and other
// processes hold, the driver's allocation granularity, and the per-process memory fraction.
// cudaMalloc fails when the device cannot supply the bytes. Virtual so that a snapshot replay
// can substitute the addresses and decisions it recorded.
#include <map>
#include <optional>
#include <string>

#include "sim/core/units.hpp"

namespace headroom::device {

// Where the driver places a new virtual range (cudaMalloc, cuMemAddressReserve) in fresh address
// space; either way a freed range is reused first, the lowest that fits, from its start.
enum class AddressOrder {
  LowestFirst,    // upwards from base_address (simulations)
  DriverTopDown,  // the CUDA driver's: downwards from base_address
};

struct DeviceSpec {
  std::string name = "GPU";
  int index = 0;
  Bytes total = 80 * GiB;            // cudaDeviceProp::totalGlobalMem
  Bytes context_bytes = 0;           // CUDA context, cuBLAS handles etc. (not torch-owned)
  Bytes other_processes = 0;         // memory held by other processes on the same GPU
  Bytes granularity = 2 * MiB;       // driver allocation granularity (cuMemGetAllocationGranularity)
  Address base_address = 0x7f0000000000ull;  // where the simulated virtual address space starts
                                             // (its top under AddressOrder::DriverTopDown)
  AddressOrder address_order = AddressOrder::LowestFirst;
};

class Device {
 public:
  explicit Device(DeviceSpec spec);
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceSpec& spec() const { return spec_; }
  Bytes total() const { return spec_.total; }
  // cudaMemGetInfo's free: total minus context, other processes and this process's driver allocations.
  // Inline: the serving loop asks after every malloc.
  Bytes free_bytes() const {
    const Bytes held = spec_.context_bytes + spec_.other_processes + used_;
    return held >= spec_.total ? 0 : spec_.total - held;
  }
  // Physical bytes this process holds through cudaMalloc / cuMemCreate (rounded to granularity).
  Bytes used_bytes() const { return used_; }
  void set_other_processes(Bytes bytes) { spec_.other_processes = bytes; }
  void set_context_bytes(Bytes bytes) { spec_.context_bytes = bytes; }

  // cudaMalloc: a fresh range of `size` bytes, or nullopt (cudaErrorMemoryAllocation).
  virtual std::optional<Address> cuda_malloc(Bytes size);
  virtual void cuda_free(Address address, Bytes size);

  // Expandable segments: reserve virtual address space only (cuMemAddressReserve) ...
  virtual Address reserve_address_range(Bytes size);
  virtual void release_address_range(Address address, Bytes size);
  // ... and back one page of it with physical memory (cuMemCreate + cuMemMap), or fail.
  virtual bool map_page(Address address, Bytes page_size);
  virtual void unmap_page(Address address, Bytes page_size);

  // Takes over a range that was cudaMalloc'd before the simulation began (a snapshot's segment):
  // counts its physical bytes and keeps later virtual ranges clear of it. False if it does not fit.
  bool adopt_range(Address address, Bytes size);

  // torch.cuda.set_per_process_memory_fraction(f): f in [0, 1]; the caching allocator refuses to
  // grow reserved memory beyond floor(f * total). Throws InputError outside [0, 1].
  void set_per_process_memory_fraction(double fraction);
  bool has_memory_fraction() const { return fraction_.has_value(); }
  std::optional<double> memory_fraction() const { return fraction_; }
  // allowed_memory_maximum in PyTorch: floor(fraction * totalGlobalMem).
  Bytes allowed_maximum() const;

 protected:
  Address take_address_range(Bytes size);
  void give_back_address_range(Address address, Bytes size);
  bool take_physical(Bytes size);
  void give_back_physical(Bytes size);

 private:
  DeviceSpec spec_;
  Bytes used_ = 0;
  std::optional<double> fraction_;
  Address next_address_;                  // the untouched address space begins (ends, top-down) here
  std::map<Address, Bytes> free_ranges_;  // returned virtual ranges, reused lowest address first
};

}  // namespace headroom::device
