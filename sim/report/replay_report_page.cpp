#include "sim/report/replay_report_page.hpp"

#include <vector>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/report/chart_series.hpp"
#include "sim/report/csv_columns.hpp"
#include "sim/report/output_files.hpp"

namespace headroom::report {

namespace {

const std::string kWrittenBy = "headroom replay -o";

template <class T>
T field(const nlohmann::json& j, const std::string& key, const std::string& file) {
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(fmt::format("{}: field '{}': missing or of the wrong type", file, key));
  }
}

std::string config_name(const nlohmann::json& r) {
  std::string c = r.value("config", std::string());
  return c.empty() ? "(defaults)" : c;
}

nlohmann::json header(const nlohmann::json& r, const std::string& file) {
  nlohmann::json facts = nlohmann::json::array();
  facts.push_back({"snapshot", field<std::string>(r, "snapshot", file)});
  facts.push_back({"allocator configuration", config_name(r)});
  facts.push_back({"trace", fmt::format("device {}, {} entries, {} allocations, {} frees", r.value("device", 0),
                                        r.value("events", 0), r.value("allocations", 0), r.value("frees", 0))});
  facts.push_back({"peak memory", fmt::format("{} allocated, {} reserved",
                                              format_bytes(field<Bytes>(r, "peak_allocated_bytes", file)),
                                              format_bytes(field<Bytes>(r, "peak_reserved_bytes", file)))});
  facts.push_back({"final memory", fmt::format("{} allocated, {} reserved",
                                               format_bytes(field<Bytes>(r, "final_allocated_bytes", file)),
                                               format_bytes(field<Bytes>(r, "final_reserved_bytes", file)))});
  if (r.contains("what_if") && !r["what_if"].empty()) {
    const nlohmann::json& cap = r["what_if"][0]["capacity_bytes"];
    facts.push_back({"what-if device", cap.is_null() ? std::string("unlimited capacity")
                                                      : format_bytes(cap.get<Bytes>()) + " capacity"});
  }
  nlohmann::json details = nlohmann::json::array();
  if (!r.value("first_difference", nlohmann::json()).is_null() && r.contains("first_difference"))
    details.push_back({{"label", "first difference from the recorded final state"},
                       {"text", r["first_difference"].get<std::string>()}});
  return {{"verdict", replay_verdict(r)}, {"facts", facts}, {"details", details}};
}

nlohmann::json memory_view(const CsvColumns& t) {
  return {{"type", "stacked_area"}, {"id", "memory"}, {"title", "Memory over the trace"}, {"group", "events"},
          {"x_name", "trace entry"}, {"x", number_array(t.column("event_index"))}, {"unit", "bytes"},
          {"areas", {named_series("allocated", t.column("allocated_bytes")),
                     named_series("cached but free", t.column("reserved_unallocated_bytes"))}},
          {"lines", nlohmann::json::array()}, {"events", nlohmann::json::array()}};
}

nlohmann::json fragmentation_view(const CsvColumns& t) {
  nlohmann::json blocks = named_series("free blocks", t.column("free_blocks"));
  blocks["axis"] = 1;
  return {{"type", "lines"}, {"id", "fragmentation"}, {"title", "Fragmentation over the trace"}, {"group", "events"},
          {"x_name", "trace entry"}, {"x", number_array(t.column("event_index"))},
          {"axes", {{{"name", "bytes"}, {"unit", "bytes"}}, {{"name", "free blocks"}, {"unit", "count"}}}},
          {"series", {named_series("reserved − allocated", t.column("reserved_unallocated_bytes")),
                      named_series("largest free block", t.column("largest_free_block_bytes")), blocks}}};
}

// Segments for the map: [address, size, stream, pool, blocks], blocks [offset, size, requested, state,
// merged] with neighbours of one state merged once the map holds more than kSegmentMapBlocks blocks.
nlohmann::json segment_map_view(const std::string& id, const std::string& title, const nlohmann::json& map,
                                const std::string& file) {
  const nlohmann::json& segments = map.at("segments");
  std::size_t total = 0;
  for (const auto& s : segments) total += s.at("blocks").size();
  const bool merge = total > kSegmentMapBlocks;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& s : segments) {
    nlohmann::json blocks = nlohmann::json::array();
    for (const auto& b : s.at("blocks")) {
      if (!b.is_array() || b.size() != 4) throw InputError(file + ": a block is not [offset, size, requested, state]");
      if (merge && !blocks.empty() && blocks.back()[3] == b[3]) {
        nlohmann::json& last = blocks.back();
        last[1] = last[1].get<Bytes>() + b[1].get<Bytes>();
        last[2] = last[2].get<Bytes>() + b[2].get<Bytes>();
        last[4] = last[4].get<int>() + 1;
        continue;
      }
      blocks.push_back({b[0], b[1], b[2], b[3], 1});
    }
    rows.push_back({{"address", s.at("address")}, {"size", s.at("total_size")}, {"stream", s.at("stream")},
                    {"pool", s.at("pool")}, {"blocks", blocks}});
  }
  return {{"type", "segment_map"}, {"id", id}, {"title", title}, {"width", "half"},
          {"event_index", map.value("event_index", 0)}, {"merged", merge}, {"segments", rows}};
}

nlohmann::json what_if_views(const nlohmann::json& rows, const OutputFolder& dir) {
  nlohmann::json views = nlohmann::json::array();
  nlohmann::json names = nlohmann::json::array();
  std::vector<double> peak_reserved, peak_allocated, frag, largest;
  nlohmann::json table_rows = nlohmann::json::array();
  for (const auto& r : rows) {
    names.push_back(config_name(r));
    peak_reserved.push_back(r.value("peak_reserved_bytes", 0.0));
    peak_allocated.push_back(r.value("peak_allocated_bytes", 0.0));
    const nlohmann::json& f = r.at("fragmentation").at("at_peak_reserved");
    frag.push_back(f.value("reserved_unallocated_bytes", 0.0));
    largest.push_back(f.value("largest_free_block_bytes", 0.0));
    const std::size_t ooms = r.value("model_ooms", std::size_t{0});
    table_rows.push_back({config_name(r), format_bytes(r.value("peak_reserved_bytes", Bytes{0})),
                          format_bytes(r.value("peak_allocated_bytes", Bytes{0})),
                          std::to_string(r.value("cuda_malloc_calls", 0)),
                          format_bytes(f.value("reserved_unallocated_bytes", Bytes{0})),
                          format_bytes(f.value("largest_free_block_bytes", Bytes{0})),
                          ooms ? std::to_string(ooms) : std::string("no")});
  }
  views.push_back({{"type", "bars"}, {"id", "what-if"}, {"title", "What-if configurations, the same request stream"},
                   {"categories", names}, {"unit", "bytes"},
                   {"series", {named_series("peak reserved", peak_reserved), named_series("peak allocated", peak_allocated),
                               named_series("reserved − allocated at peak", frag),
                               named_series("largest free block at peak", largest)}}});
  views.push_back({{"type", "table"}, {"id", "what-if-table"}, {"title", "What-if configurations"},
                   {"columns", {"configuration", "peak reserved", "peak allocated", "cudaMalloc calls",
                                "reserved − allocated at peak", "largest free block at peak", "OOM"}},
                   {"rows", table_rows}});
  // Reserved memory of each configuration over the same trace entries.
  const CsvColumns t = dir.csv("what_if_timeline.csv");
  const std::vector<double>& config = t.column("configuration");
  const std::vector<double>& index = t.column("event_index");
  const std::vector<double>& reserved = t.column("reserved_bytes");
  nlohmann::json series = nlohmann::json::array();
  for (std::size_t c = 0; c < rows.size(); ++c) {
    nlohmann::json points = nlohmann::json::array();
    for (std::size_t i = 0; i < t.rows(); ++i)
      if (config[i] == static_cast<double>(c)) points.push_back({index[i], reserved[i]});
    series.push_back({{"name", config_name(rows[c])}, {"points", points}});
  }
  nlohmann::json lines = nlohmann::json::array();
  if (!rows[0].value("capacity_bytes", nlohmann::json()).is_null())
    lines.push_back({{"name", "capacity"}, {"constant", rows[0]["capacity_bytes"]}});
  views.push_back({{"type", "xy_lines"}, {"id", "what-if-reserved"},
                   {"title", "Reserved memory of each configuration over the trace"}, {"group", "events"},
                   {"x_name", "trace entry"}, {"unit", "bytes"}, {"series", series}, {"lines", lines}});
  return views;
}

}  // namespace

std::string replay_verdict(const nlohmann::json& r) {
  const std::size_t allocations = r.value("allocations", std::size_t{0});
  const std::size_t matches = r.value("address_matches", std::size_t{0});
  std::string s;
  if (allocations == 0) {
    s = "The snapshot holds no allocations to replay (its state only)";
  } else {
    s = fmt::format("The model replays {} allocations, {} ({:.2f}%) at the recorded address", allocations, matches,
                    100.0 * static_cast<double>(matches) / static_cast<double>(allocations));
  }
  if (r.contains("final_state_matches"))
    s += r["final_state_matches"].get<bool>() ? "; its final state equals the snapshot's segments"
                                              : "; its final state differs from the snapshot's";
  if (r.contains("what_if") && r["what_if"].size() > 1) {
    // The lowest peak reserved among the what-ifs against the recorded configuration (row 0).
    const nlohmann::json& base = r["what_if"][0];
    const nlohmann::json* best = &base;
    for (const auto& w : r["what_if"])
      if (w.value("peak_reserved_bytes", Bytes{0}) < best->value("peak_reserved_bytes", Bytes{0})) best = &w;
    if (best == &base) {
      s += fmt::format("; no what-if configuration lowers peak reserved memory below {} ({})",
                       format_bytes(base.value("peak_reserved_bytes", Bytes{0})), config_name(base));
    } else {
      s += fmt::format("; {} lowers peak reserved memory from {} to {}", config_name(*best),
                       format_bytes(base.value("peak_reserved_bytes", Bytes{0})),
                       format_bytes(best->value("peak_reserved_bytes", Bytes{0})));
    }
  }
  return s + ".";
}

nlohmann::json replay_report_page(const OutputFolder& dir) {
  const std::string file = dir.path("replay.json").string();
  const nlohmann::json r = dir.json("replay.json", kWrittenBy);
  const nlohmann::json maps = dir.json("segments.json", kWrittenBy);
  const CsvColumns timeline = dir.csv("timeline.csv");
  nlohmann::json page;
  page["kind"] = "replay";
  page["title"] = "headroom replay: " + field<std::string>(r, "snapshot", file);
  page["header"] = header(r, file);
  nlohmann::json views = nlohmann::json::array();
  if (timeline.rows() > 0) {
    views.push_back(memory_view(timeline));
    views.push_back(fragmentation_view(timeline));
  }
  const std::string maps_file = dir.path("segments.json").string();
  try {
    if (!maps.at("at_peak_reserved").at("segments").empty())
      views.push_back(segment_map_view("segments-peak", "Segments at the peak of reserved memory",
                                       maps.at("at_peak_reserved"), maps_file));
    views.push_back(segment_map_view("segments-final", "Segments at the end", maps.at("final"), maps_file));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: {}", maps_file, e.what()));
  }
  if (r.contains("what_if") && !r["what_if"].empty())
    for (auto& v : what_if_views(r["what_if"], dir)) views.push_back(std::move(v));
  page["views"] = views;
  return page;
}

}  // namespace headroom::report
