#include "sim/allocator/snapshot.hpp"

#include <fstream>
#include <iterator>
#include <utility>

#include <fmt/format.h>

#include "sim/allocator/pickle_reader.hpp"
#include "sim/allocator/snapshot_detail.hpp"
#include "sim/allocator/snapshot_limits.hpp"
#include "sim/core/error.hpp"
#include "sim/core/gzip.hpp"
#include "sim/core/out_of_memory.hpp"
#include "sim/core/input_file.hpp"

namespace headroom::alloc {

const char* to_string(BlockState s) {
  switch (s) {
    case BlockState::ActiveAllocated: return "active_allocated";
    case BlockState::ActivePendingFree: return "active_pending_free";
    case BlockState::Inactive: return "inactive";
  }
  return "?";
}

const char* to_string(TraceAction a) {
  switch (a) {
    case TraceAction::Alloc: return "alloc";
    case TraceAction::FreeRequested: return "free_requested";
    case TraceAction::FreeCompleted: return "free_completed";
    case TraceAction::SegmentAlloc: return "segment_alloc";
    case TraceAction::SegmentFree: return "segment_free";
    case TraceAction::SegmentMap: return "segment_map";
    case TraceAction::SegmentUnmap: return "segment_unmap";
    case TraceAction::Snapshot: return "snapshot";
    case TraceAction::Oom: return "oom";
  }
  return "?";
}

Snapshot read_snapshot_pickle(const std::string& bytes, const std::string& where) {
  return snapshot_from_tree(pickle::parse(bytes, where), where, TreeSource::Pickle);
}

namespace {

Snapshot read_snapshot_file(const std::filesystem::path& path) {
  const std::string where = path.string();
  std::error_code ec;
  refuse_special_file(path, "snapshot");
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw InputError(where + (std::filesystem::exists(path, ec) ? ": not a regular file" : ": no such file"));
  }
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > limits::kMaxSnapshotBytes)
    throw InputError(fmt::format("{}: the snapshot is {} ({} bytes), above the limit of {} for one (docs/limits.md)",
                                 where, format_bytes(size), size, format_bytes(limits::kMaxSnapshotBytes)));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(where + ": cannot open for reading");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError(where + ": read failed");
  if (bytes.size() > limits::kMaxSnapshotBytes)  // it grew after it was measured
    throw InputError(fmt::format("{}: the snapshot is larger than the limit of {} for one (docs/limits.md)", where,
                                 format_bytes(limits::kMaxSnapshotBytes)));

  return read_snapshot_bytes(std::move(bytes), where);
}

}  // namespace

Snapshot read_snapshot_bytes(std::string bytes, const std::string& where) {
  // Real recordings are large and kept compressed (.pickle.gz, .json.gz): a gzip file is
  // recognised by its magic number, whatever its name, and held to the same limit once expanded.
  const bool compressed = is_gzip(bytes);
  if (compressed)
    bytes = gunzip(bytes, limits::kMaxSnapshotBytes, where, "the limit for one snapshot");

  // A pickle of protocol 2 or later starts with the PROTO opcode (0x80); _dump_snapshot writes
  // one. The JSON form starts with '{' (an array is let through to get a precise message).
  if (bytes.empty())
    throw InputError(where + (compressed ? ": the gzip data decompresses to nothing" : ": the file is empty") +
                     " (expected a pickle from torch.cuda.memory._dump_snapshot() or "
                             "its JSON form)");
  if (bytes.starts_with("\xFF\xFE") || bytes.starts_with("\xFE\xFF"))
    throw InputError(where + ": UTF-16 or UTF-32 text (a byte-order mark); a JSON snapshot must be UTF-8");
  const std::size_t first = bytes.find_first_not_of(" \t\r\n");
  if (!bytes.empty() && static_cast<unsigned char>(bytes[0]) == 0x80) return read_snapshot_pickle(bytes, where);
  if (first != std::string::npos && (bytes[first] == '{' || bytes[first] == '[')) {
    return read_snapshot_json(bytes, where);
  }
  throw InputError(where + (compressed ? ": the decompressed data is" : ":") +
                   " not a PyTorch memory snapshot (expected a pickle from torch.cuda.memory._dump_snapshot() "
                   "or its JSON form)");
}

Snapshot read_snapshot(const std::filesystem::path& path) {
  return while_doing(fmt::format("reading the snapshot {}", path.string()), [&] { return read_snapshot_file(path); });
}

}  // namespace headroom::alloc
