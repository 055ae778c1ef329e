#include "sim/allocator/replay.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "sim/core/downsample.hpp"

#include "sim/allocator/replay_captures.hpp"
#include "sim/allocator/size_rules.hpp"
#include "sim/core/error.hpp"

namespace headroom::alloc {

namespace {

constexpr Bytes kUnlimitedCapacity = Bytes{1} << 50;  // 1 PiB: "no capacity limit" for replays

bool is_segment_action(TraceAction a) {
  return a == TraceAction::SegmentAlloc || a == TraceAction::SegmentFree || a == TraceAction::SegmentMap ||
         a == TraceAction::SegmentUnmap;
}

}  // namespace

AllocatorConfig recorded_config(const AllocatorSettingsRecord& s) {
  AllocatorConfig c;
  if (!s.present) return c;
  c.text = s.alloc_conf;
  if (s.max_split_size > 0) c.max_split_size = static_cast<Bytes>(s.max_split_size);
  c.garbage_collection_threshold = s.garbage_collection_threshold;
  c.expandable_segments = s.expandable_segments;
  for (const auto& [key, value] : s.roundup_power2_divisions) {
    Bytes mib = std::stoull(key);
    std::size_t index = 0;
    while ((Bytes{1} << (index + 1)) <= mib) ++index;
    if (index < c.roundup_power2_divisions.size()) c.roundup_power2_divisions[index] = static_cast<std::size_t>(value);
  }
  return c;
}

namespace {

// Counts a model OOM and keeps its figures, in the release's text the user asked for; in a
// faithful replay of a recorded `oom` entry, cudaMemGetInfo's free is the recorded one.
void record_oom(ReplayReport& report, OomInfo info, const ReplayOptions& options, std::optional<Bytes> recorded_free) {
  info.pytorch = options.pytorch;
  if (options.capacity) info.total = *options.capacity;
  if (recorded_free) info.free = *recorded_free;
  ++report.model_ooms;
  if (!report.first_model_oom) report.first_model_oom = info;
  report.model_oom_infos.push_back(info);
}

// The device as the recording saw it: cudaMalloc succeeds exactly where the recording shows a
// segment_alloc, at the recorded address; a cudaMalloc the recording lacks fails when the recording
// shows a release first, and otherwise gets a fresh simulated address (counted as model-only).
class RecordedDevice : public device::Device {
 public:
  RecordedDevice(std::vector<TraceEvent>& queue, std::size_t& head, ReplayReport& report, Bytes total)
      // Model-only segments get addresses far above any real one, so they never overlap recorded ones.
      : Device(device::DeviceSpec{.name = "recorded", .total = total, .base_address = Address{1} << 62}),
        queue_(queue), head_(head), report_(report) {}

  bool oom_expected = false;  // replaying an `oom` entry: a cudaMalloc with nothing recorded fails
  bool released_with_room = false;  // a cudaMalloc refused because reality released first, with room
  bool closed = false;        // the replay is over: the model's teardown unmaps its pages uncounted

  std::optional<Address> cuda_malloc(Bytes size) override {
    if (head_ < queue_.size()) {
      const TraceEvent& e = queue_[head_];
      if (e.action == TraceAction::SegmentAlloc) {
        ++head_;
        if (e.size == size) {
          ++report_.segment_matches;
        } else {
          ++report_.model_only_segment_events;
        }
        (void)take_physical(size);
        return e.addr;
      }
      if (releases_first(e)) {
        // Reality released first; with room on the device that was no retry but an empty_cache().
        released_with_room = released_with_room || free_bytes() >= round_up(size, spec().granularity);
        return std::nullopt;
      }
    }
    if (oom_expected) return std::nullopt;
    ++report_.model_only_segment_events;
    return Device::cuda_malloc(size);
  }

  // Expandable segments: a fresh segment's range starts where the recording maps its first pages
  // (PyTorch maps a new segment from its start); pages are backed where the recording maps them,
  // one recorded segment_map (or segment_unmap) covering the pages of one model call.
  Address reserve_address_range(Bytes size) override {
    if (head_ < queue_.size() && queue_[head_].action == TraceAction::SegmentMap) return queue_[head_].addr;
    return Device::reserve_address_range(size);
  }

  bool map_page(Address address, Bytes page_size) override {
    if (head_ < queue_.size()) {
      const TraceEvent& e = queue_[head_];
      if (e.action == TraceAction::SegmentMap && address >= e.addr && address + page_size <= e.addr + e.size) {
        if (address + page_size == e.addr + e.size) {
          ++head_;
          ++report_.segment_matches;
        }
        (void)take_physical(page_size);
        return true;
      }
      if (releases_first(e)) return false;
    }
    if (oom_expected) return false;
    ++report_.model_only_segment_events;
    return Device::map_page(address, page_size);
  }

  void unmap_page(Address address, Bytes page_size) override {
    if (closed) {
      give_back_physical(page_size);
      return;
    }
    if (head_ < queue_.size() && queue_[head_].action == TraceAction::SegmentUnmap && address >= queue_[head_].addr &&
        address + page_size <= queue_[head_].addr + queue_[head_].size) {
      if (address + page_size == queue_[head_].addr + queue_[head_].size) {
        ++head_;
        ++report_.segment_matches;
      }
    } else {
      ++report_.model_only_segment_events;
    }
    give_back_physical(page_size);
  }

  void cuda_free(Address address, Bytes size) override {
    if (head_ < queue_.size() && queue_[head_].action == TraceAction::SegmentFree && queue_[head_].addr == address) {
      ++head_;
      ++report_.segment_matches;
    } else {
      ++report_.model_only_segment_events;
    }
    give_back_physical(size);
  }

  // Reality released memory (an empty_cache, or release-and-retry) before its next device call.
  static bool releases_first(const TraceEvent& e) {
    return e.action == TraceAction::SegmentFree || e.action == TraceAction::SegmentUnmap;
  }

 private:
  std::vector<TraceEvent>& queue_;
  std::size_t& head_;
  ReplayReport& report_;
};

struct StartBlock {
  Address addr = 0;
  std::optional<Bytes> exact_size;
  Bytes requested = 0;
  StreamId stream = 0;
  bool pending = false;
};

struct StartSegment {
  Address addr = 0;
  Bytes size = 0;
  StreamId stream = 0;
  bool small = false;
  std::vector<SeedBlock> blocks;
};

// Rebuilds the allocator state at the first trace entry (see replay.hpp).
std::vector<StartSegment> rebuild_start_state(const std::vector<SnapshotSegment>& final_segments,
                                              const std::vector<TraceEvent>& trace, const AllocatorConfig& cfg,
                                              std::vector<StartBlock>& live_out) {
  std::map<Address, TraceAction> first_block_event;
  std::map<Address, const TraceEvent*> first_segment_event;
  for (const TraceEvent& e : trace) {
    if (e.action == TraceAction::Alloc || e.action == TraceAction::FreeRequested ||
        e.action == TraceAction::FreeCompleted) {
      first_block_event.emplace(e.addr, e.action);
    } else if (e.action == TraceAction::SegmentAlloc || e.action == TraceAction::SegmentFree) {
      first_segment_event.emplace(e.addr, &e);
    }
  }
  std::map<Address, StartBlock> live;
  for (const TraceEvent& e : trace) {
    auto it = first_block_event.find(e.addr);
    if (it == first_block_event.end() || live.count(e.addr)) continue;
    if ((e.action == TraceAction::FreeRequested || e.action == TraceAction::FreeCompleted) &&
        it->second == e.action) {
      live[e.addr] = StartBlock{e.addr, std::nullopt, e.size, e.stream, e.action == TraceAction::FreeCompleted};
    }
  }
  std::map<Address, StartSegment> segments;
  for (const SnapshotSegment& s : final_segments) {
    for (const SnapshotBlock& b : s.blocks) {
      if (b.state == BlockState::Inactive || first_block_event.count(b.address)) continue;
      live[b.address] = StartBlock{b.address, b.size, b.requested_size, s.stream,
                                   b.state == BlockState::ActivePendingFree};
    }
    if (s.is_expandable) {
      // Made within the history when the trace maps exactly its pages; a start state cannot adopt
      // mapped pages of an expandable segment (seed_segment makes cudaMalloc'd segments).
      std::int64_t mapped = 0;
      for (const TraceEvent& e : trace) {
        if (e.addr < s.address || e.addr >= s.address + s.total_size) continue;
        if (e.action == TraceAction::SegmentMap) mapped += static_cast<std::int64_t>(e.size);
        if (e.action == TraceAction::SegmentUnmap) mapped -= static_cast<std::int64_t>(e.size);
      }
      if (mapped != static_cast<std::int64_t>(s.total_size))
        throw InputError(fmt::format("expandable segment {:#x} had pages mapped before the history began: replaying a "
                                     "history that starts after an expandable segment was mapped is not supported "
                                     "(record from the first allocation on)",
                                     s.address));
      continue;
    }
    if (!first_segment_event.count(s.address))
      segments[s.address] = StartSegment{s.address, s.total_size, s.stream, !s.is_large, {}};
  }
  for (const auto& [addr, e] : first_segment_event) {
    if (e->action == TraceAction::SegmentFree)
      segments[addr] = StartSegment{addr, e->size, e->stream, e->size == kSmallBuffer, {}};
  }
  // Place the live blocks and fill the gaps between them with free blocks.
  auto next_live = live.begin();
  for (auto& [addr, seg] : segments) {
    Address end = seg.addr + seg.size;
    Address at = seg.addr;
    while (next_live != live.end() && next_live->first < seg.addr) {
      throw InputError(fmt::format("block {:#x}, live when the history starts, lies in no segment", next_live->first));
    }
    while (next_live != live.end() && next_live->first < end) {
      StartBlock& b = next_live->second;
      ++next_live;
      Address next_start = (next_live != live.end() && next_live->first < end) ? next_live->first : end;
      if (b.addr < at)
        throw InputError(fmt::format("block {:#x}, live when the history starts, overlaps the block before it", b.addr));
      Bytes size = b.exact_size.value_or(round_size(std::max<Bytes>(b.requested, 1), cfg));
      if (!b.exact_size) {
        // The block may have been handed out whole (no split): absorb a tail too small to be a block of
        // its own, or everything when it is oversize (spec §1 split rules).
        Bytes gap = next_start > b.addr + size ? next_start - (b.addr + size) : 0;
        bool absorb = seg.small ? gap < kMinBlockSize
                                : (gap <= kSmallSize || size >= cfg.max_split_size);
        if (gap > 0 && absorb) size += gap;
      }
      if (b.addr + size > end)
        throw InputError(fmt::format("block {:#x} ({} bytes), live when the history starts, runs past the end of "
                                     "segment {:#x}", b.addr, size, seg.addr));
      if (b.addr > at) seg.blocks.push_back(SeedBlock{at, b.addr - at, 0, false, false});
      seg.blocks.push_back(SeedBlock{b.addr, size, b.requested, !b.pending, b.pending});
      live_out.push_back(b);
      at = b.addr + size;
    }
    if (at < end) seg.blocks.push_back(SeedBlock{at, end - at, 0, false, false});
  }
  if (next_live != live.end())
    throw InputError(fmt::format("block {:#x}, live when the history starts, lies in no segment", next_live->first));
  std::vector<StartSegment> out;
  for (auto& [addr, seg] : segments) out.push_back(std::move(seg));
  return out;
}


}  // namespace

std::string first_segment_difference(const std::vector<SnapshotSegment>& model,
                                     const std::vector<SnapshotSegment>& recorded) {
  std::size_t n = std::min(model.size(), recorded.size());
  for (std::size_t i = 0; i < n; ++i) {
    const SnapshotSegment& m = model[i];
    const SnapshotSegment& r = recorded[i];
    if (m.address != r.address)
      return fmt::format("segment #{}: the model's is at {:#x}, the snapshot's at {:#x}", i, m.address, r.address);
    if (m.total_size != r.total_size)
      return fmt::format("segment {:#x}: the model's has {} bytes, the snapshot's {}", m.address, m.total_size,
                         r.total_size);
    if (m.blocks.size() != r.blocks.size())
      return fmt::format("segment {:#x}: the model's has {} blocks, the snapshot's {}", m.address, m.blocks.size(),
                         r.blocks.size());
    for (std::size_t j = 0; j < m.blocks.size(); ++j) {
      const SnapshotBlock& mb = m.blocks[j];
      const SnapshotBlock& rb = r.blocks[j];
      if (mb.address != rb.address || mb.size != rb.size || mb.state != rb.state)
        return fmt::format("segment {:#x} block #{}: the model has {:#x} ({} bytes, {}), the snapshot {:#x} ({} bytes, {})",
                           m.address, j, mb.address, mb.size, to_string(mb.state), rb.address, rb.size,
                           to_string(rb.state));
    }
  }
  if (model.size() != recorded.size())
    return fmt::format("the model has {} segments, the snapshot {}", model.size(), recorded.size());
  return "";
}

ReplayReport replay_snapshot(const Snapshot& snapshot, const ReplayOptions& options) {
  ReplayReport report;
  int device = options.device;
  if (device < 0) {
    device = 0;
    for (std::size_t d = 0; d < snapshot.device_traces.size(); ++d)
      if (!snapshot.device_traces[d].empty()) {
        device = static_cast<int>(d);
        break;
      }
  }
  if (!snapshot.device_traces.empty() && static_cast<std::size_t>(device) >= snapshot.device_traces.size())
    throw InputError(fmt::format("--device {}: the snapshot has traces for {} device(s)", device,
                                 snapshot.device_traces.size()));
  report.device = device;
  static const std::vector<TraceEvent> kNoTrace;
  const std::vector<TraceEvent>& trace =
      snapshot.device_traces.empty() ? kNoTrace : snapshot.device_traces[static_cast<std::size_t>(device)];
  std::vector<SnapshotSegment> final_segments;
  for (const SnapshotSegment& s : snapshot.segments)
    if (s.device == device) final_segments.push_back(s);

  const AllocatorConfig recorded = options.recorded.value_or(recorded_config(snapshot.allocator_settings));
  const bool what_if = options.what_if.has_value();
  const AllocatorConfig config = what_if ? *options.what_if : recorded;
  report.what_if = what_if;
  report.config = to_string(config);
  report.events = trace.size();

  std::vector<StartBlock> start_live;
  std::vector<StartSegment> start = rebuild_start_state(final_segments, trace, recorded, start_live);
  report.start_segments = start.size();
  report.start_live_blocks = start_live.size();

  std::vector<TraceEvent> queue;  // recorded segment events awaiting the model's device calls
  std::size_t head = 0;
  std::unique_ptr<device::Device> dev;
  RecordedDevice* recorded_dev = nullptr;
  if (what_if) {
    dev = std::make_unique<device::Device>(
        device::DeviceSpec{.name = "what-if",
                           .total = options.capacity.value_or(kUnlimitedCapacity),
                           .granularity = options.granularity,
                           // Top-down from high enough for expandable segments' reservations of
                           // 1.125 x an unlimited capacity (1 PiB) each.
                           .base_address = Address{1} << 60,
                           .address_order = device::AddressOrder::DriverTopDown});
  } else {
    // The recording's own segments always fit its device: the capacity bounds the faithful replay
    // only as the base of a memory fraction (allowed = floor(fraction x capacity)); otherwise it is
    // the figure the OOM messages print (record_oom).
    Bytes total = kUnlimitedCapacity;
    if (options.memory_fraction && options.capacity) {
      total = *options.capacity;
      Bytes start_bytes = 0;
      for (const StartSegment& s : start) start_bytes += s.size;
      if (start_bytes > total)
        throw InputError(fmt::format("the snapshot's segments at the start of its history hold {} bytes, more than "
                                     "the --capacity of {} bytes the memory fraction is taken of",
                                     start_bytes, total));
    }
    auto rd = std::make_unique<RecordedDevice>(queue, head, report, total);
    recorded_dev = rd.get();
    dev = std::move(rd);
  }
  dev->set_context_bytes(options.context);
  if (options.memory_fraction) dev->set_per_process_memory_fraction(*options.memory_fraction);
  CachingAllocator model(*dev, config);
  std::unordered_map<Address, Block*> by_recorded_addr;

  if (!what_if) {
    for (const StartSegment& s : start) {
      std::vector<Block*> made = model.seed_segment(s.addr, s.stream, s.small, s.blocks);
      for (std::size_t i = 0; i < made.size(); ++i)
        if (s.blocks[i].allocated || s.blocks[i].pending_free) by_recorded_addr[made[i]->ptr] = made[i];
    }
  } else {
    // A fresh allocator under the new configuration: the blocks live at the start are allocated first.
    for (const StartBlock& b : start_live) {
      Block* blk = model.malloc(b.exact_size.value_or(std::max<Bytes>(b.requested, 1)), b.stream);
      if (!blk) {
        record_oom(report, *model.last_oom(), options, std::nullopt);
        continue;
      }
      if (b.pending) model.free_requested(blk);
      by_recorded_addr[b.addr] = blk;
    }
  }
  model.reset_accumulated_stats();
  model.reset_peak_stats();
  model.record_history(true);  // the model's own history of the replay, exported with its state
  if (options.check_invariants) model.check_invariants();

  std::vector<ReplayPoint> points;
  points.reserve(trace.size());
  Bytes peak_reserved_seen = 0;

  auto settle_queue = [&] {
    // Recorded segment events the model did not reproduce stay unmatched (segment_matches counts).
    queue.clear();
    head = 0;
  };
  auto record_model_oom = [&](std::optional<Bytes> recorded_free = std::nullopt) {
    record_oom(report, *model.last_oom(), options, recorded_free);
  };

  // CUDA-graph captures: the allocations into a private pool go there while the capture is underway.
  const std::vector<InferredCapture> captures = infer_captures(final_segments, trace);
  report.captures = captures.size();
  std::size_t next_capture = 0;
  std::size_t next_empty_cache = 0;
  auto note_empty_cache = [&](std::size_t i) {
    std::vector<std::size_t>& at = report.empty_cache_events;
    if (at.empty() || at.back() != i) at.push_back(i);
  };

  for (std::size_t i = 0; i < trace.size(); ++i) {
    const TraceEvent& e = trace[i];
    if (e.time_us) model.set_clock_us(*e.time_us);
    while (what_if && next_empty_cache < options.empty_cache_events.size() &&
           options.empty_cache_events[next_empty_cache] == i) {
      model.empty_cache();  // the recorded program's own empty_cache() (found by the faithful replay)
      ++next_empty_cache;
    }
    if (next_capture < captures.size() && captures[next_capture].first_event == i) {
      if (recorded_dev && head < queue.size() && RecordedDevice::releases_first(queue[head])) {
        // torch.cuda.graph empties the cache before capture_begin (torch/cuda/graphs.py, v2.11):
        // releases recorded before a capture's first allocation are that empty_cache.
        model.empty_cache();
        note_empty_cache(i);
        while (head < queue.size() && RecordedDevice::releases_first(queue[head])) ++head;
      }
      model.begin_allocate_to_pool(captures[next_capture].pool, captures[next_capture].stream);
    }
    if (is_segment_action(e.action)) {
      ++report.segment_events;
      if (!what_if) queue.push_back(e);
      continue;
    }
    if (!what_if && head < queue.size() && e.action != TraceAction::Alloc && e.action != TraceAction::Oom) {
      // Releases not followed by an allocation: an explicit empty_cache() in the recorded program.
      model.empty_cache();
      note_empty_cache(i);
      settle_queue();
    }
    switch (e.action) {
      case TraceAction::Alloc: {
        ++report.allocations;
        if (e.size == 0) break;
        if (!what_if && head < queue.size() &&
            (queue[head].action == TraceAction::SegmentFree || queue[head].action == TraceAction::SegmentUnmap) &&
            model.would_reuse_cached_block(e.size, e.stream)) {
          // A cache hit makes no device calls, so the releases before it were an explicit
          // empty_cache(). (A miss after releases is the same state either way: empty_cache then
          // cudaMalloc, or cudaMalloc fails, release_cached_blocks, retry.)
          model.empty_cache();
          note_empty_cache(i);
        }
        if (recorded_dev) recorded_dev->released_with_room = false;
        Block* b = model.malloc(e.size, e.stream);
        if (recorded_dev && recorded_dev->released_with_room) note_empty_cache(i);
        settle_queue();
        if (!b) {
          record_model_oom();
          break;
        }
        if (b->ptr == e.addr) {
          ++report.address_matches;
        } else if (report.address_matches + 1 == report.allocations) {
          report.first_address_mismatch = i;
        }
        by_recorded_addr[e.addr] = b;
        break;
      }
      case TraceAction::FreeRequested: {
        auto it = by_recorded_addr.find(e.addr);
        if (it == by_recorded_addr.end()) {
          ++report.unknown_frees;
          break;
        }
        if (it->second->allocated) model.free_requested(it->second);
        break;
      }
      case TraceAction::FreeCompleted: {
        ++report.frees;
        auto it = by_recorded_addr.find(e.addr);
        if (it == by_recorded_addr.end()) {
          ++report.unknown_frees;
          break;
        }
        Block* b = it->second;
        by_recorded_addr.erase(it);
        if (b->allocated) model.free_requested(b);  // a free_requested outside the recorded window
        model.free_completed(b);
        break;
      }
      case TraceAction::Oom: {
        ++report.recorded_ooms;
        if (recorded_dev) recorded_dev->oom_expected = true;
        Block* b = model.malloc(std::max<Bytes>(e.size, 1), e.stream);
        if (recorded_dev) recorded_dev->oom_expected = false;
        settle_queue();
        if (!b) {
          record_model_oom(what_if ? std::nullopt : e.device_free);
        } else {
          model.free(b);  // the model served what the recording could not; the program never used it
        }
        break;
      }
      default:
        break;  // `snapshot` markers carry no allocator action
    }
    if (next_capture < captures.size() && captures[next_capture].last_event == i)
      model.end_allocate_to_pool(captures[next_capture++].pool);
    if (options.check_invariants) model.check_invariants();
    Fragmentation fr = model.fragmentation();
    points.push_back(ReplayPoint{i, e.time_us.value_or(0), fr.allocated, fr.reserved, fr.largest_free_block,
                                 fr.free_blocks});
    if (fr.reserved > peak_reserved_seen || points.size() == 1) {
      peak_reserved_seen = fr.reserved;
      report.fragmentation_at_peak_reserved = fr;
      report.peak_reserved_event = i;
      if (options.keep_segments_at_peak) report.segments_at_peak_reserved = model.segments();
    }
  }
  if (what_if && next_empty_cache < options.empty_cache_events.size()) model.empty_cache();
  if (!what_if && head < queue.size()) {
    model.empty_cache();  // trailing releases: the program's last empty_cache()
    report.empty_cache_events.push_back(trace.size());
    settle_queue();
  }

  const AllocatorStats& st = model.stats();
  report.peak_allocated = static_cast<Bytes>(st.allocated_bytes[kAll].peak);
  report.peak_reserved = static_cast<Bytes>(st.reserved_bytes[kAll].peak);
  report.final_allocated = model.allocated_bytes();
  report.final_reserved = model.reserved_bytes();
  report.cuda_malloc_calls = st.num_device_alloc;
  report.cuda_free_calls = st.num_device_free;
  report.final_fragmentation = model.fragmentation();
  report.final_model_state = model.snapshot();  // segments plus the history the model recorded
  if (!what_if) {
    report.final_state_compared = true;
    report.first_difference = first_segment_difference(report.final_model_state.segments, final_segments);
    report.final_state_matches = report.first_difference.empty();
  }
  if (recorded_dev) recorded_dev->closed = true;
  downsample_keeping_extremes(points, options.max_timeline_points, [](const ReplayPoint& p) { return p.reserved; });
  report.timeline = std::move(points);
  return report;
}

}  // namespace headroom::alloc
