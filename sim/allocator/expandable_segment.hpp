#pragma once
// An expandable segment (expandable_segments:True): a virtual range of
// ceil(1.125 x total memory / page) pages reserved once per (stream, pool), backed page by page
// with physical memory on demand (cuMemAddressReserve / cuMemCreate / cuMemMap; spec §4).
#include <cstddef>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/device/device.hpp"

namespace headroom::alloc {

struct SegmentRange {
  Address ptr = 0;
  Bytes size = 0;
};

class ExpandableSegment {
 public:
  ExpandableSegment(device::Device& device, StreamId stream, Bytes page_size);
  ~ExpandableSegment();
  ExpandableSegment(const ExpandableSegment&) = delete;
  ExpandableSegment& operator=(const ExpandableSegment&) = delete;

  // Maps the pages covering [range.ptr, range.ptr + range.size); range.ptr must be page aligned.
  // Returns the mapped range, or size 0 when the device could not supply a page (pages mapped by
  // this call are released again, as PyTorch does).
  SegmentRange map(SegmentRange range);
  // Unmaps the pages lying entirely inside the range; returns them (size 0 if none).
  SegmentRange unmap(SegmentRange range);

  Address ptr() const { return base_; }
  Bytes size() const { return page_size_ * max_pages_; }
  Bytes page_size() const { return page_size_; }
  StreamId stream() const { return stream_; }
  Bytes mapped_bytes() const { return mapped_pages_ * page_size_; }

 private:
  std::size_t page_left(Address p) const { return (p - base_) / page_size_; }
  std::size_t page_right(Address p) const { return (p - base_ + page_size_ - 1) / page_size_; }

  device::Device& device_;
  StreamId stream_;
  Bytes page_size_;
  std::size_t max_pages_;
  Address base_;
  std::vector<bool> mapped_;
  std::size_t mapped_pages_ = 0;
};

}  // namespace headroom::alloc
