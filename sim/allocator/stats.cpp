#include "sim/allocator/stats.hpp"

#include <nlohmann/json.hpp>

namespace headroom::alloc {

namespace {
template <class F>
void for_each_array(AllocatorStats& s, F&& f) {
  for (StatArray* a : {&s.allocation, &s.segment, &s.active, &s.inactive_split, &s.allocated_bytes,
                       &s.reserved_bytes, &s.active_bytes, &s.inactive_split_bytes, &s.requested_bytes})
    for (Stat& st : *a) f(st);
  f(s.oversize_allocations);
  f(s.oversize_segments);
}
}  // namespace

void AllocatorStats::reset_peak() {
  for_each_array(*this, [](Stat& s) { s.reset_peak(); });
}

void AllocatorStats::reset_accumulated() {
  for_each_array(*this, [](Stat& s) { s.reset_accumulated(); });
  num_alloc_retries = num_ooms = num_sync_all_streams = num_device_alloc = num_device_free = 0;
}

void PooledStats::view_into(AllocatorStats& out) const {
  out.allocation = allocation.view();
  out.segment = segment.view();
  out.active = active.view();
  out.inactive_split = inactive_split.view();
  out.allocated_bytes = allocated_bytes.view();
  out.reserved_bytes = reserved_bytes.view();
  out.active_bytes = active_bytes.view();
  out.inactive_split_bytes = inactive_split_bytes.view();
  out.requested_bytes = requested_bytes.view();
}

nlohmann::json to_memory_stats_json(const AllocatorStats& s) {
  nlohmann::json j = nlohmann::json::object();
  auto put_array = [&](const char* name, const StatArray& a) {
    const char* pools[] = {"all", "small_pool", "large_pool"};
    for (int p = 0; p < 3; ++p) {
      std::string base = std::string(name) + "." + pools[p] + ".";
      j[base + "current"] = a[p].current;
      j[base + "peak"] = a[p].peak;
      j[base + "allocated"] = a[p].allocated;
      j[base + "freed"] = a[p].freed;
    }
  };
  auto put_stat = [&](const char* name, const Stat& st) {
    std::string base = std::string(name) + ".";
    j[base + "current"] = st.current;
    j[base + "peak"] = st.peak;
    j[base + "allocated"] = st.allocated;
    j[base + "freed"] = st.freed;
  };
  put_array("allocation", s.allocation);
  put_array("segment", s.segment);
  put_array("active", s.active);
  put_array("inactive_split", s.inactive_split);
  put_array("allocated_bytes", s.allocated_bytes);
  put_array("reserved_bytes", s.reserved_bytes);
  put_array("active_bytes", s.active_bytes);
  put_array("inactive_split_bytes", s.inactive_split_bytes);
  put_array("requested_bytes", s.requested_bytes);
  put_stat("oversize_allocations", s.oversize_allocations);
  put_stat("oversize_segments", s.oversize_segments);
  j["num_alloc_retries"] = s.num_alloc_retries;
  j["num_ooms"] = s.num_ooms;
  j["num_sync_all_streams"] = s.num_sync_all_streams;
  j["num_device_alloc"] = s.num_device_alloc;
  j["num_device_free"] = s.num_device_free;
  j["max_split_size"] = s.max_split_size;
  return j;
}

}  // namespace headroom::alloc
