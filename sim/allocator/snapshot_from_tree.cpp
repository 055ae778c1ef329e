#include "sim/allocator/snapshot_detail.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"

namespace headroom::alloc {

namespace {

using pickle::Kind;
using pickle::NodeId;

constexpr int kMaxSettingsDepth = 64;  // nesting allowed inside an unknown allocator_settings value

class Mapper {
 public:
  Mapper(const pickle::Tree& tree, const std::string& where, TreeSource source)
      : t_(tree), where_(where), json_(source == TreeSource::Json), claimed_(tree.size(), false) {}

  Snapshot run() {
    const NodeId root = t_.root();
    if (t_.kind(root) != Kind::Dict) {
      throw InputError(fmt::format("{}: not a PyTorch memory snapshot: the top level is {}, not {}", where_,
                                   a(type_name(root)), json_ ? "an object" : "a dict"));
    }
    auto segments = t_.find(root, "segments");
    if (!segments) throw InputError(where_ + ": not a PyTorch memory snapshot: no 'segments' key");

    Snapshot s;
    auto seg_items = list(*segments, "segments");
    s.segments.reserve(seg_items.size());
    for (std::size_t i = 0; i < seg_items.size(); ++i) {
      s.segments.push_back(segment(seg_items[i], fmt::format("segments[{}]", i)));
    }
    check_no_overlap(s.segments);
    if (auto traces = t_.find(root, "device_traces")) {
      auto devices = list(*traces, "device_traces");
      s.device_traces.resize(devices.size());
      for (std::size_t d = 0; d < devices.size(); ++d) {
        const std::string path = fmt::format("device_traces[{}]", d);
        auto entries = list(devices[d], path);
        s.device_traces[d].reserve(entries.size());
        for (std::size_t k = 0; k < entries.size(); ++k) {
          if (auto e = event(entries[k], fmt::format("{}[{}]", path, k))) s.device_traces[d].push_back(*e);
        }
      }
    }
    if (auto settings = t_.find(root, "allocator_settings")) s.allocator_settings = allocator_settings(*settings);
    // Other top-level keys (external_annotations, ...) carry nothing the model uses.
    return s;
  }

 private:
  // ---- messages -------------------------------------------------------------------------------
  const char* type_name(NodeId id) const {
    if (!json_) return pickle::python_type_name(t_.kind(id));
    switch (t_.kind(id)) {
      case Kind::None: return "null";
      case Kind::Bool: return "boolean";
      case Kind::Int: return "integer";
      case Kind::Float: return "number";
      case Kind::Str: return "string";
      case Kind::Bytes: return "bytes";
      case Kind::List:
      case Kind::Tuple: return "array";
      case Kind::Dict: return "object";
    }
    return "?";
  }
  static std::string a(const char* noun) {
    const char c = noun[0];
    const bool vowel = c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
    return std::string(vowel ? "an " : "a ") + noun;
  }
  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw InputError(fmt::format("{}: {}: {}", where_, path, what));
  }
  [[noreturn]] void wrong_type(NodeId id, const std::string& path, const std::string& expected) const {
    fail(path, fmt::format("expected {}, got {}", expected, type_name(id)));
  }
  std::string int_text(NodeId id) const {
    return t_.int_negative(id) ? std::to_string(static_cast<std::int64_t>(t_.int_bits(id)))
                               : std::to_string(t_.int_bits(id));
  }
  // A dict or list is read once: a pickle that shares one between places (through its memo)
  // could otherwise make a small file expand into an enormous snapshot.
  void claim(NodeId id, const std::string& path) {
    if (claimed_[id]) {
      fail(path, fmt::format("this {} also appears elsewhere in the file (a shared reference); a snapshot never "
                             "shares one", type_name(id)));
    }
    claimed_[id] = true;
  }

  // ---- typed access ---------------------------------------------------------------------------
  std::span<const NodeId> list(NodeId id, const std::string& path) {
    if (t_.kind(id) != Kind::List) wrong_type(id, path, json_ ? "an array" : "a list");
    claim(id, path);
    return t_.items(id);
  }
  void dict(NodeId id, const std::string& path) {
    if (t_.kind(id) != Kind::Dict) wrong_type(id, path, json_ ? "an object" : "a dict");
    claim(id, path);
  }
  NodeId need(NodeId dict_id, const char* key, const std::string& path) const {
    auto v = t_.find(dict_id, key);
    if (!v) fail(path, fmt::format("missing key '{}'", key));
    return *v;
  }
  static std::string field(const std::string& path, const char* key) { return path + "." + key; }

  std::int64_t int64(NodeId id, const std::string& path) const {
    if (t_.kind(id) != Kind::Int) wrong_type(id, path, "an integer");
    auto v = t_.int64(id);
    if (!v) fail(path, fmt::format("expected a signed 64-bit integer, got {}", int_text(id)));
    return *v;
  }
  std::uint64_t bytes(NodeId id, const std::string& path) const {
    if (t_.kind(id) != Kind::Int) wrong_type(id, path, "an integer");
    if (t_.int_negative(id)) fail(path, fmt::format("expected a non-negative integer, got {}", int_text(id)));
    return t_.int_bits(id);
  }
  // Addresses and stream handles: PyTorch writes them as int64_t(value), so a value at or above
  // 2^63 arrives negative; its two's-complement bits are the unsigned value.
  std::uint64_t handle(NodeId id, const std::string& path) const {
    if (t_.kind(id) != Kind::Int) wrong_type(id, path, "an integer");
    return t_.int_bits(id);
  }
  bool boolean(NodeId id, const std::string& path) const {
    if (t_.kind(id) != Kind::Bool) wrong_type(id, path, json_ ? "a boolean" : "a bool");
    return t_.boolean(id);
  }
  std::string_view str(NodeId id, const std::string& path) const {
    if (t_.kind(id) != Kind::Str) wrong_type(id, path, "a string");
    return t_.text(id);
  }
  double number(NodeId id, const std::string& path) const {
    if (t_.kind(id) == Kind::Float) return t_.real(id);
    if (t_.kind(id) == Kind::Int) {
      return t_.int_negative(id) ? static_cast<double>(static_cast<std::int64_t>(t_.int_bits(id)))
                                 : static_cast<double>(t_.int_bits(id));
    }
    wrong_type(id, path, "a number");
  }
  std::pair<std::int64_t, std::int64_t> pair(NodeId id, const std::string& path) const {
    // A Python tuple in the pickle, an array in JSON; a list is accepted from either.
    if (t_.kind(id) != Kind::Tuple && t_.kind(id) != Kind::List) wrong_type(id, path, "a pair of integers");
    auto items = t_.items(id);
    if (items.size() != 2) fail(path, fmt::format("expected a pair of integers, got {} items", items.size()));
    return {int64(items[0], path + "[0]"), int64(items[1], path + "[1]")};
  }

  // ---- snapshot parts -------------------------------------------------------------------------
  // Segments are cudaMalloc'd (or reserved) address ranges: on one device they never share a byte,
  // and a replay of two that did would double-count memory.
  void check_no_overlap(const std::vector<SnapshotSegment>& segments) const {
    std::vector<std::size_t> order(segments.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const SnapshotSegment &x = segments[a], &y = segments[b];
      return x.device != y.device ? x.device < y.device : x.address != y.address ? x.address < y.address : a < b;
    });
    for (std::size_t k = 1; k < order.size(); ++k) {
      const SnapshotSegment &prev = segments[order[k - 1]], &cur = segments[order[k]];
      if (prev.device != cur.device || cur.address - prev.address >= prev.total_size) continue;
      fail(fmt::format("segments[{}]", order[k]),
           fmt::format("the segment at 0x{:x} ({} bytes, device {}) overlaps segments[{}] at 0x{:x} ({} bytes, to "
                       "0x{:x}); segments of one device never share an address",
                       cur.address, cur.total_size, cur.device, order[k - 1], prev.address, prev.total_size,
                       prev.address + prev.total_size));
    }
  }

  SnapshotSegment segment(NodeId id, const std::string& path) {
    dict(id, path);
    SnapshotSegment s;
    const std::int64_t device = int64(need(id, "device", path), field(path, "device"));
    if (device < 0 || device > std::numeric_limits<int>::max()) {
      fail(field(path, "device"), fmt::format("expected a device index, got {}", device));
    }
    s.device = static_cast<int>(device);
    s.address = handle(need(id, "address", path), field(path, "address"));
    s.total_size = bytes(need(id, "total_size", path), field(path, "total_size"));
    if (s.total_size > ~Address{0} - s.address)
      fail(field(path, "total_size"), fmt::format("{} bytes from 0x{:x} run past the end of the 64-bit address space",
                                                  s.total_size, s.address));
    s.allocated_size = bytes(need(id, "allocated_size", path), field(path, "allocated_size"));
    s.active_size = bytes(need(id, "active_size", path), field(path, "active_size"));
    s.stream = handle(need(id, "stream", path), field(path, "stream"));
    const std::string_view type = str(need(id, "segment_type", path), field(path, "segment_type"));
    if (type == "large") s.is_large = true;
    else if (type == "small") s.is_large = false;
    else fail(field(path, "segment_type"), fmt::format("expected 'large' or 'small', got '{}'", type));
    if (auto v = t_.find(id, "segment_pool_id")) s.pool_id = pair(*v, field(path, "segment_pool_id"));
    if (auto v = t_.find(id, "is_expandable")) s.is_expandable = boolean(*v, field(path, "is_expandable"));

    const std::string blocks_path = field(path, "blocks");
    auto blocks = list(need(id, "blocks", path), blocks_path);
    s.blocks.reserve(blocks.size());
    Address next = s.address;  // blocks tile the segment in address order
    for (std::size_t j = 0; j < blocks.size(); ++j) {
      const std::string block_path = fmt::format("{}[{}]", blocks_path, j);
      s.blocks.push_back(block(blocks[j], block_path, next));
      if (s.blocks.back().address != next && !s.is_expandable)
        fail(field(block_path, "address"), fmt::format("expected {} (where the previous block ends: blocks tile their "
                                                       "segment), got {}", next, s.blocks.back().address));
      next = s.blocks.back().address + s.blocks.back().size;
    }
    // PyTorch's snapshot lists every block of a segment, free ones included (docs/allocator-model.md
    // §6), so they add up to its size; an expandable segment's mapped part is not recorded here.
    if (!s.is_expandable && !s.blocks.empty() && next - s.address != s.total_size)
      fail(blocks_path, fmt::format("the blocks add up to {} bytes, the segment's total_size is {}", next - s.address,
                                    s.total_size));
    if (auto v = t_.find(id, "requested_size")) {
      s.requested_size = bytes(*v, field(path, "requested_size"));
    } else {
      // Older PyTorch versions lack it; it is the sum over active blocks (docs/allocator-model.md §6).
      for (const SnapshotBlock& b : s.blocks) {
        if (b.state != BlockState::Inactive) s.requested_size += b.requested_size;
      }
    }
    return s;
  }

  SnapshotBlock block(NodeId id, const std::string& path, Address expected_address) {
    dict(id, path);
    SnapshotBlock b;
    // Old snapshots have no block address; the viewer (MemoryViz.js) derives it the same way.
    auto addr = t_.find(id, "address");
    b.address = addr ? handle(*addr, field(path, "address")) : expected_address;
    b.size = bytes(need(id, "size", path), field(path, "size"));
    auto requested = t_.find(id, "requested_size");
    b.requested_size = requested ? bytes(*requested, field(path, "requested_size")) : b.size;
    const std::string_view state = str(need(id, "state", path), field(path, "state"));
    if (state == "active_allocated") b.state = BlockState::ActiveAllocated;
    // The docstrings of torch.cuda.memory._snapshot say "active_awaiting_free"; the code writes
    // "active_pending_free" (docs/allocator-model.md §6). Both mean the same state.
    else if (state == "active_pending_free" || state == "active_awaiting_free") b.state = BlockState::ActivePendingFree;
    else if (state == "inactive") b.state = BlockState::Inactive;
    else {
      fail(field(path, "state"),
           fmt::format("unknown block state '{}' (expected active_allocated, active_pending_free or inactive)", state));
    }
    return b;
  }

  std::optional<TraceEvent> event(NodeId id, const std::string& path) {
    dict(id, path);
    const std::string_view action = str(need(id, "action", path), field(path, "action"));
    static constexpr TraceAction kActions[] = {
        TraceAction::Alloc,      TraceAction::FreeRequested, TraceAction::FreeCompleted,
        TraceAction::SegmentAlloc, TraceAction::SegmentFree, TraceAction::SegmentMap,
        TraceAction::SegmentUnmap, TraceAction::Snapshot,    TraceAction::Oom,
    };
    std::optional<TraceAction> found;
    for (TraceAction candidate : kActions) {
      if (action == to_string(candidate)) found = candidate;
    }
    if (!found) {
      // Recent PyTorch records user annotations in the trace ("user_defined" entries from
      // torch.cuda.memory._record_annotation; "annotate" in some versions). They change no memory.
      if (action == "user_defined" || action == "annotate") return std::nullopt;
      fail(field(path, "action"),
           fmt::format("unknown action '{}' (expected alloc, free_requested, free_completed, segment_alloc, "
                       "segment_free, segment_map, segment_unmap, snapshot or oom)", action));
    }
    TraceEvent e;
    e.action = *found;
    // An oom entry has device_free where the others have addr (torch/csrc/cuda/memory_snapshot.cpp).
    if (e.action == TraceAction::Oom) {
      if (auto v = t_.find(id, "addr")) e.addr = handle(*v, field(path, "addr"));
    } else {
      e.addr = handle(need(id, "addr", path), field(path, "addr"));
    }
    e.size = bytes(need(id, "size", path), field(path, "size"));
    e.stream = handle(need(id, "stream", path), field(path, "stream"));
    if (auto v = t_.find(id, "time_us"); v && t_.kind(*v) != Kind::None) e.time_us = int64(*v, field(path, "time_us"));
    if (auto v = t_.find(id, "device_free")) e.device_free = bytes(*v, field(path, "device_free"));
    if (auto v = t_.find(id, "pool_id")) e.pool_id = pair(*v, field(path, "pool_id"));
    return e;
  }

  AllocatorSettingsRecord allocator_settings(NodeId id) {
    const std::string path = "allocator_settings";
    dict(id, path);
    AllocatorSettingsRecord r;
    r.present = true;
    auto kv = t_.items(id);
    for (std::size_t i = 0; i + 1 < kv.size(); i += 2) {
      if (t_.kind(kv[i]) != Kind::Str) fail(path, fmt::format("a key is {}, expected a string", a(type_name(kv[i]))));
      const std::string key(t_.text(kv[i]));
      const NodeId v = kv[i + 1];
      const std::string p = path + "." + key;
      if (key == "PYTORCH_CUDA_ALLOC_CONF") {
        r.alloc_conf = std::string(str(v, p));
      } else if (key == "max_split_size") {
        r.max_split_size = int64(v, p);
      } else if (key == "garbage_collection_threshold") {
        r.garbage_collection_threshold = number(v, p);
      } else if (key == "expandable_segments") {
        r.expandable_segments = boolean(v, p);
      } else if (key == "roundup_power2_divisions") {
        dict(v, p);
        r.roundup_power2_divisions.clear();
        auto divisions = t_.items(v);
        for (std::size_t k = 0; k + 1 < divisions.size(); k += 2) {
          if (t_.kind(divisions[k]) != Kind::Str) {
            fail(p, fmt::format("a key is {}, expected a string", a(type_name(divisions[k]))));
          }
          const std::string size_mib(t_.text(divisions[k]));
          r.roundup_power2_divisions[size_mib] = int64(divisions[k + 1], p + "." + size_mib);
        }
      } else {
        r.other_json[key] = to_json(v, p, 0).dump();
      }
    }
    return r;
  }

  nlohmann::json to_json(NodeId id, const std::string& path, int depth) {
    if (depth > kMaxSettingsDepth) fail(path, fmt::format("nested deeper than {} levels", kMaxSettingsDepth));
    switch (t_.kind(id)) {
      case Kind::None: return nullptr;
      case Kind::Bool: return t_.boolean(id);
      case Kind::Int:
        if (t_.int_negative(id)) return static_cast<std::int64_t>(t_.int_bits(id));
        return t_.int_bits(id);
      case Kind::Float: return t_.real(id);
      case Kind::Str: return std::string(t_.text(id));
      case Kind::Bytes: fail(path, "a bytes value cannot be kept (only plain JSON-like data is)");
      case Kind::List:
      case Kind::Tuple: {
        claim(id, path);
        nlohmann::json out = nlohmann::json::array();
        auto items = t_.items(id);
        for (std::size_t i = 0; i < items.size(); ++i) {
          out.push_back(to_json(items[i], fmt::format("{}[{}]", path, i), depth + 1));
        }
        return out;
      }
      case Kind::Dict: {
        claim(id, path);
        nlohmann::json out = nlohmann::json::object();
        auto kv = t_.items(id);
        for (std::size_t i = 0; i + 1 < kv.size(); i += 2) {
          if (t_.kind(kv[i]) != Kind::Str) fail(path, fmt::format("a key is {}, expected a string", a(type_name(kv[i]))));
          const std::string key(t_.text(kv[i]));
          out[key] = to_json(kv[i + 1], path + "." + key, depth + 1);
        }
        return out;
      }
    }
    return nullptr;
  }

  const pickle::Tree& t_;
  const std::string& where_;
  bool json_;
  std::vector<bool> claimed_;
};

}  // namespace

Snapshot snapshot_from_tree(const pickle::Tree& tree, const std::string& where, TreeSource source) {
  return Mapper(tree, where, source).run();
}

}  // namespace headroom::alloc
