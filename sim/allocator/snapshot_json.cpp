// The JSON form of a snapshot: the dict PyTorch pickles, with tuples as arrays and no stack frames
// (docs/allocator-model.md §6). Also reads the derived `<name>.segments.json` files, which hold
// only allocator_settings and segments.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/allocator/pickle_reader.hpp"
#include "sim/allocator/snapshot.hpp"
#include "sim/allocator/snapshot_detail.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"

namespace headroom::alloc {

namespace {

using pickle::Kind;
using pickle::NodeId;

// Builds the value tree straight from nlohmann's SAX events: no JSON DOM, no recursion, so
// nesting depth costs nothing here (the mapper bounds what it walks).
class TreeBuilder : public nlohmann::json_sax<nlohmann::json> {
 public:
  pickle::Tree tree;
  std::size_t error_position = 0;
  std::string error_message;

  bool null() override { return value(tree.add_none()); }
  bool boolean(bool v) override { return value(tree.add_bool(v)); }
  bool number_integer(number_integer_t v) override {
    return value(tree.add_int(static_cast<std::uint64_t>(v), v < 0));
  }
  bool number_unsigned(number_unsigned_t v) override { return value(tree.add_int(v, false)); }
  bool number_float(number_float_t v, const string_t&) override { return value(tree.add_float(v)); }
  bool string(string_t& v) override { return value(tree.add_text(Kind::Str, v)); }
  bool binary(binary_t&) override { return false; }  // not produced by the JSON text parser
  bool start_object(std::size_t) override { return open(Kind::Dict); }
  bool key(string_t& v) override {
    tree.append(open_.back(), tree.add_text(Kind::Str, v));
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(Kind::List); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    error_position = position;
    error_message = ex.what();
    return false;
  }

 private:
  bool value(NodeId id) {
    if (open_.empty()) tree.set_root(id);
    else tree.append(open_.back(), id);
    return true;
  }
  bool open(Kind kind) {
    NodeId id = tree.add_container(kind);
    value(id);
    open_.push_back(id);
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }
  std::vector<NodeId> open_;
};

// "FILE:LINE:COLUMN: not valid JSON: <nlohmann's reason>" from the parser's byte position.
[[noreturn]] void json_syntax_error(const std::string& text, const std::string& where, const TreeBuilder& b) {
  const std::size_t pos = std::min(b.error_position, text.size());
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i + 1 < pos; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  const std::size_t column = pos > line_start ? pos - line_start : 1;
  // nlohmann's text is "[json.exception.parse_error.101] parse error at line L, column C: REASON".
  std::string reason = b.error_message;
  if (auto c = reason.find("column "); c != std::string::npos) {
    if (auto colon = reason.find(": ", c); colon != std::string::npos) reason = reason.substr(colon + 2);
  }
  throw InputError(fmt::format("{}:{}:{}: not valid JSON: {}", where, line, column, reason));
}

using ojson = nlohmann::ordered_json;

ojson pair_json(const std::pair<std::int64_t, std::int64_t>& p) { return ojson::array({p.first, p.second}); }

ojson segment_json(const SnapshotSegment& s) {
  ojson j;
  j["device"] = s.device;
  j["address"] = s.address;
  j["total_size"] = s.total_size;
  j["allocated_size"] = s.allocated_size;
  j["active_size"] = s.active_size;
  j["requested_size"] = s.requested_size;
  j["stream"] = s.stream;
  j["segment_type"] = s.is_large ? "large" : "small";
  j["segment_pool_id"] = pair_json(s.pool_id);
  j["is_expandable"] = s.is_expandable;
  ojson blocks = ojson::array();
  for (const SnapshotBlock& b : s.blocks) {
    ojson bj;
    bj["address"] = b.address;
    bj["size"] = b.size;
    bj["requested_size"] = b.requested_size;
    bj["state"] = to_string(b.state);
    blocks.push_back(std::move(bj));
  }
  j["blocks"] = std::move(blocks);
  return j;
}

ojson event_json(const TraceEvent& e) {
  ojson j;
  j["action"] = to_string(e.action);
  // PyTorch puts device_free where addr goes on an oom entry (torch/csrc/cuda/memory_snapshot.cpp).
  if (e.action == TraceAction::Oom) {
    if (e.device_free) j["device_free"] = *e.device_free;
  } else {
    j["addr"] = e.addr;
  }
  j["size"] = e.size;
  j["stream"] = e.stream;
  if (e.time_us) j["time_us"] = *e.time_us;
  if (e.device_free && e.action != TraceAction::Oom) j["device_free"] = *e.device_free;
  j["pool_id"] = pair_json(e.pool_id);
  return j;
}

ojson settings_json(const AllocatorSettingsRecord& r) {
  ojson j;
  j["PYTORCH_CUDA_ALLOC_CONF"] = r.alloc_conf;
  j["max_split_size"] = r.max_split_size;
  j["garbage_collection_threshold"] = r.garbage_collection_threshold;
  j["expandable_segments"] = r.expandable_segments;
  for (const auto& [key, text] : r.other_json) j[key] = ojson::parse(text);
  ojson divisions = ojson::object();
  for (const auto& [size_mib, d] : roundup_in_size_order(r)) divisions[size_mib] = d;
  j["roundup_power2_divisions"] = std::move(divisions);
  return j;
}

}  // namespace

Snapshot read_snapshot_json(const std::string& text, const std::string& where) {
  TreeBuilder builder;
  try {
    if (!nlohmann::json::sax_parse(text, &builder)) json_syntax_error(text, where, builder);
  } catch (const pickle::TreeFull& e) {
    throw InputError(fmt::format("{}: {}", where, e.what()));
  }
  return snapshot_from_tree(builder.tree, where, TreeSource::Json);
}

std::string snapshot_to_json_text(const Snapshot& snapshot) {
  ojson root;
  ojson segments = ojson::array();
  for (const SnapshotSegment& s : snapshot.segments) segments.push_back(segment_json(s));
  root["segments"] = std::move(segments);
  ojson traces = ojson::array();
  for (const auto& trace : snapshot.device_traces) {
    ojson events = ojson::array();
    for (const TraceEvent& e : trace) events.push_back(event_json(e));
    traces.push_back(std::move(events));
  }
  root["device_traces"] = std::move(traces);
  if (snapshot.allocator_settings.present) root["allocator_settings"] = settings_json(snapshot.allocator_settings);
  return root.dump() + "\n";
}

void write_snapshot_json(const Snapshot& snapshot, const std::filesystem::path& path) {
  const std::string text = snapshot_to_json_text(snapshot);
  write_file_atomically(path, [&](std::ostream& out) { out << text; });
}

}  // namespace headroom::alloc
