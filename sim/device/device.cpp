#include "sim/device/device.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom::device {

Device::Device(DeviceSpec spec) : spec_(std::move(spec)), next_address_(spec_.base_address) {}

bool Device::take_physical(Bytes size) {
  Bytes need = round_up(size, spec_.granularity);
  if (need > free_bytes()) return false;
  used_ += need;
  return true;
}

void Device::give_back_physical(Bytes size) { used_ -= round_up(size, spec_.granularity); }

Address Device::take_address_range(Bytes size) {
  Bytes span = round_up(size, spec_.granularity);
  // First fit by address among returned ranges, from the range's start: keeps addresses low and
  // deterministic, and is the CUDA driver's reuse of freed ranges too.
  for (auto it = free_ranges_.begin(); it != free_ranges_.end(); ++it) {
    if (it->second >= span) {
      Address a = it->first;
      Bytes rest = it->second - span;
      free_ranges_.erase(it);
      if (rest) free_ranges_.emplace(a + span, rest);
      return a;
    }
  }
  if (spec_.address_order == AddressOrder::DriverTopDown) {
    // The CUDA driver takes fresh address space downwards, below every range it handed out before
    // (docs/replay-and-allocator.md, "The driver's addresses").
    if (span > next_address_ - spec_.granularity)
      throw std::logic_error("device: the virtual address space below base_address is exhausted");
    next_address_ -= span;
    return next_address_;
  }
  Address a = next_address_;
  next_address_ += span;
  return a;
}

void Device::give_back_address_range(Address address, Bytes size) {
  Bytes span = round_up(size, spec_.granularity);
  auto [it, inserted] = free_ranges_.emplace(address, span);
  (void)inserted;
  // Coalesce with neighbours so large ranges can be reused.
  if (auto next = std::next(it); next != free_ranges_.end() && it->first + it->second == next->first) {
    it->second += next->second;
    free_ranges_.erase(next);
  }
  if (it != free_ranges_.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      free_ranges_.erase(it);
      it = prev;
    }
  }
  if (spec_.address_order == AddressOrder::DriverTopDown) {
    if (it->first == next_address_) {
      next_address_ += it->second;
      free_ranges_.erase(it);
    }
  } else if (it->first + it->second == next_address_) {
    next_address_ = it->first;
    free_ranges_.erase(it);
  }
}

std::optional<Address> Device::cuda_malloc(Bytes size) {
  if (!take_physical(size)) return std::nullopt;
  return take_address_range(size);
}

void Device::cuda_free(Address address, Bytes size) {
  give_back_physical(size);
  give_back_address_range(address, size);
}

Address Device::reserve_address_range(Bytes size) { return take_address_range(size); }

void Device::release_address_range(Address address, Bytes size) { give_back_address_range(address, size); }

bool Device::map_page(Address, Bytes page_size) { return take_physical(page_size); }

void Device::unmap_page(Address, Bytes page_size) { give_back_physical(page_size); }

bool Device::adopt_range(Address address, Bytes size) {
  if (!take_physical(size)) return false;
  if (spec_.address_order == AddressOrder::DriverTopDown) {
    Address start = address / spec_.granularity * spec_.granularity;
    if (start < next_address_) next_address_ = start;  // seeded before any simulated cudaMalloc
    return true;
  }
  Address end = round_up(address + size, spec_.granularity);
  if (end > next_address_) next_address_ = end;  // seeded before any simulated cudaMalloc
  return true;
}

void Device::set_per_process_memory_fraction(double fraction) {
  // torch/cuda/memory.py: "Invalid fraction value: {}. Allowed range: 0~1".
  if (!(fraction >= 0.0 && fraction <= 1.0))
    throw InputError(fmt::format("set_per_process_memory_fraction: invalid fraction value {}; allowed range: 0~1",
                                 fraction));
  fraction_ = fraction;
}

Bytes Device::allowed_maximum() const {
  if (!fraction_) return spec_.total;
  return static_cast<Bytes>(std::floor(*fraction_ * static_cast<double>(spec_.total)));
}

}  // namespace headroom::device
