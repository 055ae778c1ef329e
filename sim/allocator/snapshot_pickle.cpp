// Writes a snapshot as the pickle torch.cuda.memory._dump_snapshot() writes: the same dict keys in
// the same order, tuples for pool ids, and an empty `frames` list wherever PyTorch puts one, so
// that Python's pickle and PyTorch's memory viewer (pytorch.org/memory_viz) open it.
#include <nlohmann/json.hpp>

#include "sim/allocator/pickle_writer.hpp"
#include "sim/allocator/snapshot.hpp"
#include "sim/allocator/snapshot_detail.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"

namespace headroom::alloc {

namespace {

void empty_frames(pickle::Writer& w) {
  w.key("frames");
  w.begin_list();
  w.end();
}

// Unknown allocator_settings values were kept as JSON text; they go back as plain data.
void json_value(pickle::Writer& w, const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null: w.none(); return;
    case nlohmann::json::value_t::boolean: w.boolean(j.get<bool>()); return;
    case nlohmann::json::value_t::number_integer: w.integer(j.get<std::int64_t>()); return;
    case nlohmann::json::value_t::number_unsigned: w.unsigned_integer(j.get<std::uint64_t>()); return;
    case nlohmann::json::value_t::number_float: w.real(j.get<double>()); return;
    case nlohmann::json::value_t::string: w.str(j.get_ref<const std::string&>()); return;
    case nlohmann::json::value_t::array:
      w.begin_list();
      for (const auto& item : j) {
        w.item();
        json_value(w, item);
      }
      w.end();
      return;
    case nlohmann::json::value_t::object:
      w.begin_dict();
      for (const auto& [key, item] : j.items()) {
        w.key(key);
        json_value(w, item);
      }
      w.end();
      return;
    default:
      throw InputError("allocator_settings: a value of this kind cannot be written to a pickle");
  }
}

void write_segment(pickle::Writer& w, const SnapshotSegment& s) {
  w.begin_dict();
  w.key("device");
  w.integer(s.device);
  w.key("address");
  w.unsigned_integer(s.address);
  w.key("total_size");
  w.unsigned_integer(s.total_size);
  w.key("allocated_size");
  w.unsigned_integer(s.allocated_size);
  w.key("active_size");
  w.unsigned_integer(s.active_size);
  w.key("requested_size");
  w.unsigned_integer(s.requested_size);
  w.key("stream");
  w.unsigned_integer(s.stream);
  w.key("segment_type");
  w.str(s.is_large ? "large" : "small");
  w.key("segment_pool_id");
  w.pair(s.pool_id.first, s.pool_id.second);
  w.key("is_expandable");
  w.boolean(s.is_expandable);
  empty_frames(w);
  w.key("blocks");
  w.begin_list();
  for (const SnapshotBlock& b : s.blocks) {
    w.item();
    w.begin_dict();
    w.key("address");
    w.unsigned_integer(b.address);
    w.key("size");
    w.unsigned_integer(b.size);
    w.key("requested_size");
    w.unsigned_integer(b.requested_size);
    w.key("state");
    w.str(to_string(b.state));
    empty_frames(w);
    w.end();
  }
  w.end();
  w.end();
}

void write_event(pickle::Writer& w, const TraceEvent& e) {
  w.begin_dict();
  w.key("action");
  w.str(to_string(e.action));
  // PyTorch puts device_free where addr goes on an oom entry (torch/csrc/cuda/memory_snapshot.cpp).
  if (e.action == TraceAction::Oom) {
    if (e.device_free) {
      w.key("device_free");
      w.unsigned_integer(*e.device_free);
    }
  } else {
    w.key("addr");
    w.unsigned_integer(e.addr);
  }
  w.key("size");
  w.unsigned_integer(e.size);
  w.key("stream");
  w.unsigned_integer(e.stream);
  if (e.time_us) {
    w.key("time_us");
    w.integer(*e.time_us);
  }
  if (e.device_free && e.action != TraceAction::Oom) {
    w.key("device_free");
    w.unsigned_integer(*e.device_free);
  }
  w.key("pool_id");
  w.pair(e.pool_id.first, e.pool_id.second);
  empty_frames(w);
  w.end();
}

void write_settings(pickle::Writer& w, const AllocatorSettingsRecord& r) {
  w.begin_dict();
  w.key("PYTORCH_CUDA_ALLOC_CONF");
  w.str(r.alloc_conf);
  w.key("max_split_size");
  w.integer(r.max_split_size);
  w.key("garbage_collection_threshold");
  w.real(r.garbage_collection_threshold);
  w.key("expandable_segments");
  w.boolean(r.expandable_segments);
  for (const auto& [key, text] : r.other_json) {
    w.key(key);
    json_value(w, nlohmann::json::parse(text));
  }
  w.key("roundup_power2_divisions");
  w.begin_dict();
  for (const auto& [size_mib, divisions] : roundup_in_size_order(r)) {
    w.key(size_mib);
    w.integer(divisions);
  }
  w.end();
  w.end();
}

}  // namespace

std::string snapshot_to_pickle_bytes(const Snapshot& snapshot) {
  pickle::Writer w;
  w.begin_dict();
  w.key("segments");
  w.begin_list();
  for (const SnapshotSegment& s : snapshot.segments) {
    w.item();
    write_segment(w, s);
  }
  w.end();
  w.key("device_traces");
  w.begin_list();
  for (const auto& trace : snapshot.device_traces) {
    w.item();
    w.begin_list();
    for (const TraceEvent& e : trace) {
      w.item();
      write_event(w, e);
    }
    w.end();
  }
  w.end();
  if (snapshot.allocator_settings.present) {
    w.key("allocator_settings");
    write_settings(w, snapshot.allocator_settings);
  }
  w.end();
  return w.finish();
}

void write_snapshot_pickle(const Snapshot& snapshot, const std::filesystem::path& path) {
  const std::string bytes = snapshot_to_pickle_bytes(snapshot);
  write_file_atomically(path, [&](std::ostream& out) { out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())); },
                        /*binary=*/true);
}

}  // namespace headroom::alloc
