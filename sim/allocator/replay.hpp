#pragma once
// Replaying a recorded PyTorch allocator history through the model (headroom replay).
//
// Faithful mode (no what-if): the start state is rebuilt from the snapshot's final segments and the
// trace (segments that existed before the history began, blocks live across its start), then every
// alloc / free_requested / free_completed goes through the model. Where the model asks the driver for
// memory, the address recorded by the matching segment_alloc is used, so that later allocations can be
// compared address for address; segment_alloc/segment_free decisions are compared in order. An
// expandable segment's address range starts at the recorded segment_map, and its pages are mapped
// and unmapped where the recording shows it. CUDA-graph captures are inferred from the private pools'
// segments (replay_captures.hpp).
//
// What-if mode: the same request stream (sizes, streams, order of frees, captures, the program's own
// empty_cache() calls) under another allocator configuration on a device of a given capacity, with
// addresses handed out as the CUDA driver does (device::AddressOrder::DriverTopDown).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/allocator/alloc_config.hpp"
#include "sim/allocator/caching_allocator.hpp"
#include "sim/allocator/oom.hpp"
#include "sim/allocator/snapshot.hpp"

namespace headroom::alloc {

struct ReplayOptions {
  int device = -1;                          // -1: the first device with trace entries
  std::optional<AllocatorConfig> recorded;  // --alloc-conf: the configuration the history ran under
                                            // (default: the snapshot's allocator_settings)
  std::optional<AllocatorConfig> what_if;   // replay the request stream under this configuration
  std::optional<Bytes> capacity;            // device capacity (cudaMemGetInfo total; default: unlimited)
  std::optional<double> memory_fraction;    // set_per_process_memory_fraction the history ran under
  Bytes granularity = 2 * MiB;              // the driver's allocation granularity (what-if device)
  Bytes context = 0;                        // this process's device memory outside PyTorch (CUDA context,
                                            // cuBLAS workspaces): the OOM message's "this process has"
  PytorchRelease pytorch = kNewestPytorch;  // whose OOM text the messages follow
  std::vector<std::size_t> empty_cache_events;  // what-if: the trace indices before which the recorded program
                                                // called empty_cache() (ReplayReport::empty_cache_events of
                                                // its faithful replay); trace.size() for one at the end
  bool check_invariants = false;            // run the invariant checker after every event (slow)
  std::size_t max_timeline_points = 2000;   // down-sampled (min/max kept) fragmentation timeline
  bool keep_segments_at_peak = false;       // copy the segment map when reserved memory peaks
};

struct ReplayPoint {
  std::size_t event_index = 0;
  std::int64_t time_us = 0;
  Bytes allocated = 0;
  Bytes reserved = 0;
  Bytes largest_free_block = 0;
  std::int64_t free_blocks = 0;
};

struct ReplayReport {
  std::string config;                       // the allocator configuration replayed
  bool what_if = false;
  int device = 0;
  std::size_t events = 0;
  std::size_t allocations = 0;              // alloc events replayed
  std::size_t address_matches = 0;          // ... whose model address equals the recording
  std::size_t first_address_mismatch = 0;   // event index (valid if address_matches < allocations)
  std::size_t frees = 0;                    // free_completed events replayed
  std::size_t unknown_frees = 0;            // frees of addresses neither seeded nor allocated
  std::size_t segment_events = 0;           // recorded segment_alloc/free/map/unmap
  std::size_t segment_matches = 0;          // ... that the model made identically, in order
  std::size_t model_only_segment_events = 0;// device calls the model made that the recording lacks
  std::size_t recorded_ooms = 0;
  std::size_t model_ooms = 0;
  std::optional<OomInfo> first_model_oom;
  std::vector<OomInfo> model_oom_infos;     // every OOM of the model, in order (a recorded `oom` entry's
                                            // free figure is the recorded cudaMemGetInfo free)
  std::vector<std::size_t> empty_cache_events;  // faithful: where the recorded program called empty_cache()
  std::size_t captures = 0;                 // CUDA-graph captures inferred from the private pools' segments
  std::size_t start_segments = 0;           // segments in the rebuilt start state
  std::size_t start_live_blocks = 0;
  bool final_state_compared = false;
  bool final_state_matches = false;
  std::string first_difference;             // empty when the final state matches
  Bytes peak_allocated = 0, peak_reserved = 0, final_allocated = 0, final_reserved = 0;
  std::int64_t cuda_malloc_calls = 0;       // num_device_alloc during the replay
  std::int64_t cuda_free_calls = 0;
  Fragmentation final_fragmentation;
  Fragmentation fragmentation_at_peak_reserved;
  std::size_t peak_reserved_event = 0;      // trace index where reserved memory first reached its peak
  std::vector<SnapshotSegment> segments_at_peak_reserved;  // with keep_segments_at_peak
  std::vector<ReplayPoint> timeline;
  Snapshot final_model_state;               // the model's state at the end and its recorded history
};

// The configuration a snapshot was recorded under, from its allocator_settings.
AllocatorConfig recorded_config(const AllocatorSettingsRecord& settings);

// Throws InputError for snapshots that cannot be replayed (inconsistent start state, an expandable
// segment mapped before the history began, a device index that does not exist).
ReplayReport replay_snapshot(const Snapshot& snapshot, const ReplayOptions& options);

// Compares segment lists (address, size, blocks and their states); returns the first difference or "".
std::string first_segment_difference(const std::vector<SnapshotSegment>& model,
                                     const std::vector<SnapshotSegment>& recorded);

}  // namespace headroom::alloc
