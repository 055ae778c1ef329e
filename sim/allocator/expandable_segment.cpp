#include "sim/allocator/expandable_segment.hpp"

namespace headroom::alloc {

ExpandableSegment::ExpandableSegment(device::Device& device, StreamId stream, Bytes page_size)
    : device_(device), stream_(stream), page_size_(page_size) {
  // "enough address space for 1 1/8 the total memory on the GPU" (CUDACachingAllocator.cpp).
  Bytes total = device_.total();
  max_pages_ = static_cast<std::size_t>((total + total / 8 + page_size_ - 1) / page_size_);
  base_ = device_.reserve_address_range(page_size_ * max_pages_);
}

ExpandableSegment::~ExpandableSegment() {
  for (std::size_t i = 0; i < mapped_.size(); ++i)
    if (mapped_[i]) device_.unmap_page(base_ + i * page_size_, page_size_);
  device_.release_address_range(base_, page_size_ * max_pages_);
}

SegmentRange ExpandableSegment::map(SegmentRange range) {
  std::size_t begin = page_left(range.ptr);
  std::size_t end = page_right(range.ptr + range.size);
  if (end > max_pages_) return {range.ptr, 0};
  if (mapped_.size() < end) mapped_.resize(end, false);
  for (std::size_t i = begin; i < end; ++i) {
    if (!device_.map_page(base_ + i * page_size_, page_size_)) {
      for (std::size_t j = begin; j < i; ++j) {
        device_.unmap_page(base_ + j * page_size_, page_size_);
        mapped_[j] = false;
      }
      mapped_pages_ -= i - begin;
      return {base_ + begin * page_size_, 0};
    }
    mapped_[i] = true;
    ++mapped_pages_;
  }
  return {base_ + begin * page_size_, (end - begin) * page_size_};
}

SegmentRange ExpandableSegment::unmap(SegmentRange range) {
  std::size_t begin = page_right(range.ptr);
  std::size_t end = page_left(range.ptr + range.size);
  if (begin >= end) return {range.ptr, 0};
  for (std::size_t i = begin; i < end; ++i) {
    device_.unmap_page(base_ + i * page_size_, page_size_);
    mapped_[i] = false;
    --mapped_pages_;
  }
  return {base_ + begin * page_size_, (end - begin) * page_size_};
}

}  // namespace headroom::alloc
