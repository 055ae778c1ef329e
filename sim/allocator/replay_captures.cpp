#include "sim/allocator/replay_captures.hpp"

#include <map>
#include <optional>

namespace headroom::alloc {

namespace {

struct PoolSegmentSpan {
  Address end = 0;
  std::size_t born = 0;  // trace index after which the segment holds this pool's blocks
  PoolId pool{0, 0};
};

}  // namespace

std::vector<InferredCapture> infer_captures(const std::vector<SnapshotSegment>& segments,
                                            const std::vector<TraceEvent>& trace) {
  std::map<Address, PoolSegmentSpan> spans;  // private-pool segments by start address
  for (const SnapshotSegment& s : segments) {
    if (s.pool_id.first == 0 && s.pool_id.second == 0) continue;
    spans[s.address] = PoolSegmentSpan{s.address + s.total_size, 0,
                                       PoolId{static_cast<std::uint64_t>(s.pool_id.first),
                                              static_cast<std::uint64_t>(s.pool_id.second)}};
  }
  std::vector<InferredCapture> out;
  if (spans.empty()) return out;
  // The address may have held a default-pool segment before (freed by empty_cache, then
  // cudaMalloc'd again for the pool): the pool owns it from its last segment_alloc on.
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const TraceEvent& e = trace[i];
    if (e.action != TraceAction::SegmentAlloc) continue;
    auto it = spans.find(e.addr);
    if (it != spans.end()) it->second.born = i;
  }
  auto pool_of = [&](std::size_t i, Address addr) -> std::optional<PoolId> {
    auto it = spans.upper_bound(addr);
    if (it == spans.begin()) return std::nullopt;
    --it;
    if (addr >= it->second.end || i < it->second.born) return std::nullopt;
    return it->second.pool;
  };
  bool in_run = false;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const TraceEvent& e = trace[i];
    if (e.action != TraceAction::Alloc || e.size == 0) continue;
    std::optional<PoolId> pool = pool_of(i, e.addr);
    if (!pool) {
      in_run = false;
      continue;
    }
    if (in_run && out.back().pool == *pool && out.back().stream == e.stream) {
      out.back().last_event = i;
      ++out.back().allocations;
      continue;
    }
    out.push_back(InferredCapture{i, i, *pool, e.stream, 1});
    in_run = true;
  }
  return out;
}

}  // namespace headroom::alloc
