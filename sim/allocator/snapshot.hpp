#pragma once
// The data of a PyTorch memory snapshot (torch.cuda.memory._snapshot(), written by _dump_snapshot()),
// as plain structs: segments with their blocks, the per-device trace, and the allocator settings.
// Stack frames are dropped on read (they are most of the bytes and the model has no use for them).
// Field names and meanings: docs/allocator-model.md §6.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/units.hpp"

namespace headroom::alloc {

enum class BlockState { ActiveAllocated, ActivePendingFree, Inactive };

struct SnapshotBlock {
  Address address = 0;
  Bytes size = 0;
  Bytes requested_size = 0;
  BlockState state = BlockState::Inactive;
};

struct SnapshotSegment {
  int device = 0;
  Address address = 0;
  Bytes total_size = 0;
  Bytes allocated_size = 0;
  Bytes active_size = 0;
  Bytes requested_size = 0;
  StreamId stream = 0;
  bool is_large = true;                               // segment_type "large" | "small"
  std::pair<std::int64_t, std::int64_t> pool_id{0, 0};  // segment_pool_id; (0,0) = default pool
  bool is_expandable = false;
  std::vector<SnapshotBlock> blocks;                  // address-ordered
};

enum class TraceAction {
  Alloc,
  FreeRequested,
  FreeCompleted,
  SegmentAlloc,
  SegmentFree,
  SegmentMap,
  SegmentUnmap,
  Snapshot,
  Oom,
};

struct TraceEvent {
  TraceAction action = TraceAction::Alloc;
  Address addr = 0;
  Bytes size = 0;
  StreamId stream = 0;
  std::optional<std::int64_t> time_us;  // epoch microseconds; absent in some PyTorch versions
  std::optional<Bytes> device_free;     // only on `oom` entries
  std::pair<std::int64_t, std::int64_t> pool_id{0, 0};  // recent versions record it
};

// allocator_settings as recorded. Unknown keys are kept verbatim (as JSON text) so a re-export
// loses nothing the model does not understand.
struct AllocatorSettingsRecord {
  bool present = false;
  std::string alloc_conf;                 // "PYTORCH_CUDA_ALLOC_CONF"
  std::int64_t max_split_size = -1;       // -1 = unlimited
  double garbage_collection_threshold = 0.0;
  bool expandable_segments = false;
  std::map<std::string, std::int64_t> roundup_power2_divisions;  // "1".."32768" (MiB) -> divisions
  std::map<std::string, std::string> other_json;                 // key -> JSON text of the value
};

struct Snapshot {
  std::vector<SnapshotSegment> segments;
  std::vector<std::vector<TraceEvent>> device_traces;  // one list per device
  AllocatorSettingsRecord allocator_settings;
};

const char* to_string(BlockState s);   // "active_allocated" | "active_pending_free" | "inactive"
const char* to_string(TraceAction a);  // "alloc", "free_requested", ... as PyTorch writes them

// Reads a snapshot from a PyTorch pickle (_dump_snapshot) or the same data as JSON; the format is
// detected from the first byte. A gzip file (.pickle.gz, .json.gz) is decompressed first, to at most
// limits::kMaxSnapshotBytes. Throws InputError naming the file and what is wrong.
// Dropped on read: stack frames, compile_context, user_metadata, top-level keys other than the
// three above (external_annotations), and trace entries of user annotations ("user_defined").
Snapshot read_snapshot(const std::filesystem::path& path);
// The same from the file's bytes (`where` names it in errors).
Snapshot read_snapshot_bytes(std::string bytes, const std::string& where);
Snapshot read_snapshot_pickle(const std::string& bytes, const std::string& where);
Snapshot read_snapshot_json(const std::string& text, const std::string& where);

// Writers (through write_file_atomically). The pickle has PyTorch's shape (dicts, lists, tuples,
// ints, strs, floats, bools; empty `frames` lists) so that Python's pickle and PyTorch's memory
// viewer (pytorch.org/memory_viz) open it.
void write_snapshot_json(const Snapshot& snapshot, const std::filesystem::path& path);
void write_snapshot_pickle(const Snapshot& snapshot, const std::filesystem::path& path);
std::string snapshot_to_json_text(const Snapshot& snapshot);
std::string snapshot_to_pickle_bytes(const Snapshot& snapshot);

}  // namespace headroom::alloc
