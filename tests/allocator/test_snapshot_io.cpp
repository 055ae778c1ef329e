// Snapshot reading and writing against the real PyTorch snapshots in the data folder and the
// files derived from them (torch_snapshots/<name>.segments.json and <name>.events.csv, written
// with Python's json/csv modules; README §3 of the data folder).
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/allocator/pickle_reader.hpp"
#include "sim/allocator/pickle_writer.hpp"
#include "sim/allocator/snapshot.hpp"
#include "sim/core/error.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom;
using namespace headroom::alloc;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE(in);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void spit(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out);
}

std::string from_hex(const std::string& hex) {
  std::string out;
  std::istringstream in(hex);
  std::string byte;
  while (in >> byte) out.push_back(static_cast<char>(std::stoi(byte, nullptr, 16)));
  return out;
}

// One row of <name>.events.csv: device,seq,action,addr,size,stream,time_us,device_free.
struct CsvEvent {
  std::size_t device = 0, seq = 0;
  std::string action;
  std::optional<std::uint64_t> addr, size, stream, device_free;
  std::optional<std::int64_t> time_us;
};

std::vector<CsvEvent> read_events_csv(const fs::path& p) {
  std::ifstream in(p);
  REQUIRE(in);
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();  // the derived files have CRLF line ends
  REQUIRE(line == "device,seq,action,addr,size,stream,time_us,device_free");
  std::vector<CsvEvent> rows;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) f.push_back(cell);
    if (!line.empty() && line.back() == ',') f.emplace_back();
    REQUIRE(f.size() == 8);
    auto u = [](const std::string& s) { return s.empty() ? std::nullopt : std::optional<std::uint64_t>(std::stoull(s)); };
    CsvEvent e;
    e.device = std::stoul(f[0]);
    e.seq = std::stoul(f[1]);
    e.action = f[2];
    e.addr = u(f[3]);
    e.size = u(f[4]);
    e.stream = u(f[5]);
    if (!f[6].empty()) e.time_us = std::stoll(f[6]);
    e.device_free = u(f[7]);
    rows.push_back(e);
  }
  return rows;
}

// Field-by-field equality, so that a failure names what differs.
void check_same_segments(const std::vector<SnapshotSegment>& a, const std::vector<SnapshotSegment>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("segment " << i);
    CHECK(a[i].device == b[i].device);
    CHECK(a[i].address == b[i].address);
    CHECK(a[i].total_size == b[i].total_size);
    CHECK(a[i].allocated_size == b[i].allocated_size);
    CHECK(a[i].active_size == b[i].active_size);
    CHECK(a[i].requested_size == b[i].requested_size);
    CHECK(a[i].stream == b[i].stream);
    CHECK(a[i].is_large == b[i].is_large);
    CHECK(a[i].pool_id == b[i].pool_id);
    CHECK(a[i].is_expandable == b[i].is_expandable);
    REQUIRE(a[i].blocks.size() == b[i].blocks.size());
    for (std::size_t j = 0; j < a[i].blocks.size(); ++j) {
      INFO("block " << j);
      CHECK(a[i].blocks[j].address == b[i].blocks[j].address);
      CHECK(a[i].blocks[j].size == b[i].blocks[j].size);
      CHECK(a[i].blocks[j].requested_size == b[i].blocks[j].requested_size);
      CHECK(a[i].blocks[j].state == b[i].blocks[j].state);
    }
  }
}

void check_same_settings(const AllocatorSettingsRecord& a, const AllocatorSettingsRecord& b) {
  CHECK(a.present == b.present);
  CHECK(a.alloc_conf == b.alloc_conf);
  CHECK(a.max_split_size == b.max_split_size);
  CHECK(a.garbage_collection_threshold == b.garbage_collection_threshold);
  CHECK(a.expandable_segments == b.expandable_segments);
  CHECK(a.roundup_power2_divisions == b.roundup_power2_divisions);
  CHECK(a.other_json == b.other_json);
}

void check_same(const Snapshot& a, const Snapshot& b) {
  check_same_segments(a.segments, b.segments);
  REQUIRE(a.device_traces.size() == b.device_traces.size());
  for (std::size_t d = 0; d < a.device_traces.size(); ++d) {
    REQUIRE(a.device_traces[d].size() == b.device_traces[d].size());
    for (std::size_t k = 0; k < a.device_traces[d].size(); ++k) {
      INFO("device " << d << " event " << k);
      const TraceEvent& x = a.device_traces[d][k];
      const TraceEvent& y = b.device_traces[d][k];
      CHECK(x.action == y.action);
      CHECK(x.addr == y.addr);
      CHECK(x.size == y.size);
      CHECK(x.stream == y.stream);
      CHECK(x.time_us == y.time_us);
      CHECK(x.device_free == y.device_free);
      CHECK(x.pool_id == y.pool_id);
    }
  }
  check_same_settings(a.allocator_settings, b.allocator_settings);
}

BlockState state_named(const std::string& s) {
  if (s == "active_allocated") return BlockState::ActiveAllocated;
  if (s == "active_pending_free") return BlockState::ActivePendingFree;
  REQUIRE(s == "inactive");
  return BlockState::Inactive;
}

// The segments of <name>.segments.json, read with nlohmann directly (not through our reader).
std::vector<SnapshotSegment> segments_from_derived_json(const fs::path& p) {
  const nlohmann::json j = nlohmann::json::parse(slurp(p));
  std::vector<SnapshotSegment> out;
  for (const auto& s : j.at("segments")) {
    SnapshotSegment seg;
    seg.device = s.at("device").get<int>();
    seg.address = s.at("address").get<std::uint64_t>();
    seg.total_size = s.at("total_size").get<std::uint64_t>();
    seg.allocated_size = s.at("allocated_size").get<std::uint64_t>();
    seg.active_size = s.at("active_size").get<std::uint64_t>();
    seg.requested_size = s.at("requested_size").get<std::uint64_t>();
    seg.stream = s.at("stream").get<std::uint64_t>();
    seg.is_large = s.at("segment_type").get<std::string>() == "large";
    seg.pool_id = {s.at("segment_pool_id").at(0).get<std::int64_t>(), s.at("segment_pool_id").at(1).get<std::int64_t>()};
    seg.is_expandable = s.at("is_expandable").get<bool>();
    for (const auto& b : s.at("blocks")) {
      seg.blocks.push_back({b.at("address").get<std::uint64_t>(), b.at("size").get<std::uint64_t>(),
                            b.at("requested_size").get<std::uint64_t>(), state_named(b.at("state").get<std::string>())});
    }
    out.push_back(std::move(seg));
  }
  return out;
}

struct RealSnapshot {
  const char* name;
  std::size_t segments, large_segments, events;
};
// Counts from the data folder's README §3a.
constexpr RealSnapshot kReal[] = {
    {"cs336_magma27_train_step", 216, 208, 5163},
    {"cs336_bcrafton_train_step", 96, 67, 6486},
    {"kivi_sketchkv2_llm_inference_state", 259, 243, 1},
};

std::string expect_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no InputError thrown");
  return {};
}

}  // namespace

TEST_CASE("real PyTorch snapshots load with the segments and events of their derived files") {
  for (const RealSnapshot& r : kReal) {
    const std::string base = std::string("torch_snapshots/") + r.name;
    INFO(r.name);
    const Snapshot s = read_snapshot(test::data_file(base + ".pickle"));

    REQUIRE(s.segments.size() == r.segments);
    CHECK(static_cast<std::size_t>(std::count_if(s.segments.begin(), s.segments.end(),
                                                 [](const SnapshotSegment& g) { return g.is_large; })) == r.large_segments);
    check_same_segments(s.segments, segments_from_derived_json(test::data_file(base + ".segments.json")));

    const std::vector<CsvEvent> rows = read_events_csv(test::data_file(base + ".events.csv"));
    REQUIRE(rows.size() == r.events);
    REQUIRE(s.device_traces.size() == 1);
    REQUIRE(s.device_traces[0].size() == r.events);
    for (const CsvEvent& row : rows) {
      INFO("event " << row.seq);
      REQUIRE(row.device == 0);
      const TraceEvent& e = s.device_traces[0].at(row.seq);
      CHECK(to_string(e.action) == row.action);
      CHECK(e.addr == row.addr.value_or(0));
      CHECK(e.size == row.size.value());
      CHECK(e.stream == row.stream.value());
      CHECK(e.time_us == row.time_us);
      CHECK(e.device_free == row.device_free);
    }

    const AllocatorSettingsRecord& a = s.allocator_settings;
    CHECK(a.present);
    CHECK(a.alloc_conf.empty());
    CHECK(a.max_split_size == -1);
    CHECK(a.garbage_collection_threshold == 0.0);
    CHECK_FALSE(a.expandable_segments);
    CHECK(a.roundup_power2_divisions.size() == 16);
    CHECK(a.roundup_power2_divisions.at("32768") == 0);
    CHECK(a.other_json.at("pinned_num_register_threads") == "1");
    CHECK(a.other_json.at("release_lock_on_cudamalloc") == "false");
  }
}

TEST_CASE("the first segment and trace entry of a real snapshot hold PyTorch's figures") {
  const Snapshot s = read_snapshot(test::data_file("torch_snapshots/cs336_magma27_train_step.pickle"));
  // Values as Python's pickle module reads them from the file.
  const SnapshotSegment& g = s.segments.at(0);
  CHECK(g.address == 47294971904ull);
  CHECK(g.total_size == 25165824);
  CHECK(g.blocks.size() == 1);
  CHECK(g.blocks[0].state == BlockState::Inactive);
  const TraceEvent& e = s.device_traces.at(0).at(0);
  CHECK(e.action == TraceAction::Alloc);
  CHECK(e.addr == 47294971904ull);
  CHECK(e.size == 25165824);
  CHECK(e.time_us == 1776479641085368);
}

TEST_CASE("the derived segments.json files read as the same state as their pickles") {
  for (const RealSnapshot& r : kReal) {
    INFO(r.name);
    const std::string base = std::string("torch_snapshots/") + r.name;
    const Snapshot from_pickle = read_snapshot(test::data_file(base + ".pickle"));
    const Snapshot from_json = read_snapshot(test::data_file(base + ".segments.json"));
    check_same_segments(from_json.segments, from_pickle.segments);
    check_same_settings(from_json.allocator_settings, from_pickle.allocator_settings);
    CHECK(from_json.device_traces.empty());
  }
}

TEST_CASE("a snapshot written as JSON reads back equal") {
  const fs::path dir = test::temp_dir("snapshot-json");
  for (const RealSnapshot& r : kReal) {
    INFO(r.name);
    const Snapshot s = read_snapshot(test::data_file(std::string("torch_snapshots/") + r.name + ".pickle"));
    const fs::path out = dir / (std::string(r.name) + ".json");
    write_snapshot_json(s, out);
    CHECK(slurp(out).front() == '{');
    check_same(read_snapshot(out), s);
  }
}

TEST_CASE("a snapshot written as a pickle reads back equal") {
  const fs::path dir = test::temp_dir("snapshot-pickle");
  for (const RealSnapshot& r : kReal) {
    INFO(r.name);
    const Snapshot s = read_snapshot(test::data_file(std::string("torch_snapshots/") + r.name + ".pickle"));
    const fs::path out = dir / (std::string(r.name) + ".pickle");
    write_snapshot_pickle(s, out);
    const std::string bytes = slurp(out);
    CHECK(bytes.substr(0, 2) == std::string("\x80\x04", 2));
    check_same(read_snapshot(out), s);
  }
}

TEST_CASE("the writers keep oom entries, pools, expandable segments and settings") {
  Snapshot s;
  SnapshotSegment g;
  g.device = 1;
  g.address = 0xFFFF'FFFF'0000'0000ull;  // above 2^63: PyTorch would write it negative
  g.total_size = 20 * MiB;
  g.allocated_size = 2 * MiB;
  g.active_size = 4 * MiB;
  g.requested_size = 3 * MiB;
  g.stream = 0x5555'0000'1234ull;
  g.is_large = true;
  g.pool_id = {7, -3};
  g.is_expandable = true;
  g.blocks = {{g.address, 2 * MiB, 2 * MiB - 512, BlockState::ActiveAllocated},
              {g.address + 2 * MiB, 2 * MiB, MiB, BlockState::ActivePendingFree},
              {g.address + 4 * MiB, 16 * MiB, 0, BlockState::Inactive}};
  s.segments.push_back(g);
  s.device_traces.resize(2);
  TraceEvent oom;
  oom.action = TraceAction::Oom;
  oom.size = 40 * MiB;
  oom.stream = 7;
  oom.device_free = 123456789;
  oom.time_us = -5;
  TraceEvent map;
  map.action = TraceAction::SegmentMap;
  map.addr = g.address;
  map.size = 20 * MiB;
  map.pool_id = {7, -3};
  TraceEvent snap;
  snap.action = TraceAction::Snapshot;
  snap.size = 4 * MiB;
  s.device_traces[1] = {map, oom, snap};
  s.allocator_settings.present = true;
  s.allocator_settings.alloc_conf = "expandable_segments:True,max_split_size_mb:128";
  s.allocator_settings.max_split_size = 128 * static_cast<std::int64_t>(MiB);
  s.allocator_settings.garbage_collection_threshold = 0.6;
  s.allocator_settings.expandable_segments = true;
  s.allocator_settings.roundup_power2_divisions = {{"1", 4}, {"2", 4}, {"1024", 8}};
  s.allocator_settings.other_json = {{"pinned_num_register_threads", "1"},
                                     {"nested", R"({"a":[1,-2,3.5,null,true,"x"],"b":18446744073709551615})"}};

  const fs::path dir = test::temp_dir("snapshot-synthetic");
  write_snapshot_pickle(s, dir / "s.pickle");
  write_snapshot_json(s, dir / "s.json");
  check_same(read_snapshot(dir / "s.pickle"), s);
  check_same(read_snapshot(dir / "s.json"), s);
  // An oom entry has device_free in place of addr, as PyTorch writes it.
  const auto j = nlohmann::json::parse(slurp(dir / "s.json"));
  CHECK_FALSE(j["device_traces"][1][1].contains("addr"));
  CHECK(j["device_traces"][1][1]["device_free"] == 123456789);
  CHECK(j["segments"][0]["segment_pool_id"] == nlohmann::json::array({7, -3}));
  CHECK(j["allocator_settings"]["roundup_power2_divisions"].dump() == R"({"1":4,"1024":8,"2":4})");
}

TEST_CASE("pickle integers span int64 and uint64 and keep their values") {
  pickle::Writer w;
  w.begin_list();
  const std::int64_t signed_values[] = {0, 1, 255, 256, 65535, 65536, 0x7FFFFFFF, -1, -128, -129, INT32_MIN,
                                        static_cast<std::int64_t>(INT32_MIN) - 1, INT64_MIN, INT64_MAX};
  for (std::int64_t v : signed_values) {
    w.item();
    w.integer(v);
  }
  const std::uint64_t unsigned_values[] = {0x80000000ull, 0xFFFFFFFFull, 0x7FFF'FFFF'FFFF'FFFFull,
                                           0x8000'0000'0000'0000ull, ~0ull};
  for (std::uint64_t v : unsigned_values) {
    w.item();
    w.unsigned_integer(v);
  }
  w.end();
  const pickle::Tree t = pickle::parse(w.finish(), "ints");
  auto items = t.items(t.root());
  REQUIRE(items.size() == std::size(signed_values) + std::size(unsigned_values));
  for (std::size_t i = 0; i < std::size(signed_values); ++i) CHECK(t.int64(items[i]) == signed_values[i]);
  for (std::size_t i = 0; i < std::size(unsigned_values); ++i) {
    CHECK(t.uint64(items[std::size(signed_values) + i]) == unsigned_values[i]);
  }
  // LONG1 of 9 bytes beyond 2^64, and LONG4 of 0 bytes (the integer 0).
  CHECK_THROWS_WITH(pickle::parse(from_hex("80 04 8a 09 00 00 00 00 00 00 00 00 01 2e"), "big"),
                    "big: byte 2: LONG1: integer of 9 bytes does not fit in 64 bits");
  const pickle::Tree zero = pickle::parse(from_hex("80 04 8b 00 00 00 00 2e"), "zero");
  CHECK(zero.int64(zero.root()) == 0);
}

TEST_CASE("text and memo opcodes of older protocols are read") {
  // Protocol 0: (lp0\nI1\naI01\naL-7L\naF2.5\na(dp1\ng0\nI3\nsa. = [1, True, -7, 2.5, {[...]: 3}]
  // is refused for its list key, so the dict here uses an int key: {4: 3}.
  const pickle::Tree t = pickle::parse("(lp0\nI1\naI01\naL-7L\naF2.5\na(dp1\nI4\nI3\nsa.", "p0");
  auto items = t.items(t.root());
  REQUIRE(items.size() == 5);
  CHECK(t.int64(items[0]) == 1);
  CHECK(t.kind(items[1]) == pickle::Kind::Bool);
  CHECK(t.int64(items[2]) == -7);
  CHECK(t.real(items[3]) == 2.5);
  CHECK(t.kind(items[4]) == pickle::Kind::Dict);
  CHECK_THROWS_WITH(pickle::parse("(lp0\n(dp1\ng0\nI3\nsa.", "p0"),
                    "p0: byte 16: malformed pickle: SETITEM uses an unhashable list as a dict key");
}

TEST_CASE("a real snapshot pickle cut in half is reported as truncated") {
  const std::string full = slurp(test::data_file("torch_snapshots/cs336_magma27_train_step.pickle"));
  REQUIRE(full.size() == 495064);
  const fs::path p = test::temp_dir("snapshot-half") / "half.pickle";
  spit(p, full.substr(0, full.size() / 2));
  // The cut (byte 247532) falls inside the 64 KiB frame that starts at byte 196638 (pickletools.genops).
  CHECK(expect_error([&] { read_snapshot(p); }) ==
        p.string() + ": byte 196638: truncated pickle (65536 bytes needed, 50885 left, while reading a FRAME)");
}

TEST_CASE("malformed snapshot files are refused with messages that say where and why") {
  const fs::path dir = test::temp_dir("snapshot-bad");
  auto read_bytes = [&](const std::string& name, const std::string& bytes) {
    const fs::path p = dir / name;
    spit(p, bytes);
    return expect_error([&] { read_snapshot(p); });
  };
  const std::string d = dir.string() + "/";

  SECTION("empty file") {
    CHECK(read_bytes("empty.pickle", "") ==
          d + "empty.pickle: the file is empty (expected a pickle from torch.cuda.memory._dump_snapshot() or its "
              "JSON form)");
  }
  SECTION("missing file") {
    CHECK(expect_error([&] { read_snapshot(dir / "nothing.pickle"); }) == d + "nothing.pickle: no such file");
  }
  SECTION("a pickle that ends between opcodes or inside an argument") {
    CHECK(read_bytes("open.pickle", from_hex("80 04 5d 94")) ==
          d + "open.pickle: byte 4: truncated pickle (1 byte needed, 0 left, while reading the next opcode)");
    CHECK(read_bytes("arg.pickle", from_hex("80 04 8c 0c 61 62 63")) ==
          d + "arg.pickle: byte 2: truncated pickle (12 bytes needed, 3 left, while reading the argument of "
              "SHORT_BINUNICODE)");
  }
  SECTION("a length field larger than the file") {
    CHECK(read_bytes("huge.pickle", from_hex("80 04 8d ff ff ff ff ff ff ff ff")) ==
          d + "huge.pickle: byte 2: truncated pickle (18446744073709551615 bytes needed, 0 left, while reading the "
              "argument of BINUNICODE8)");
  }
  SECTION("a JSON array instead of an object") {
    CHECK(read_bytes("array.json", "[1, 2]") ==
          d + "array.json: not a PyTorch memory snapshot: the top level is an array, not an object");
  }
  SECTION("JSON without segments") {
    CHECK(read_bytes("nosegs.json", R"({"device_traces": []})") ==
          d + "nosegs.json: not a PyTorch memory snapshot: no 'segments' key");
  }
  SECTION("JSON syntax error") {
    CHECK(read_bytes("syntax.json", "{\"segments\": [\n  {\"device\": 0,}\n]}") ==
          d + "syntax.json:2:16: not valid JSON: syntax error while parsing object key - unexpected '}'; expected "
              "string literal");
    CHECK(read_bytes("syntax1.json", "{x") ==
          d + "syntax1.json:1:2: not valid JSON: syntax error while parsing object key - invalid literal; last read: "
              "'{x'; expected string literal");
  }
  SECTION("a pickle of a list") {
    // pickle.dumps([], 4)
    CHECK(read_bytes("list.pickle", from_hex("80 04 5d 94 2e")) ==
          d + "list.pickle: not a PyTorch memory snapshot: the top level is a list, not a dict");
  }
  SECTION("a pickle that names a Python global") {
    // pickle.dumps(collections.OrderedDict, 4): STACK_GLOBAL at byte 39.
    CHECK(read_bytes("global4.pickle", from_hex("80 04 95 1f 00 00 00 00 00 00 00 8c 0b 63 6f 6c 6c 65 63 74 69 6f "
                                                "6e 73 94 8c 0b 4f 72 64 65 72 65 64 44 69 63 74 94 93 94 2e")) ==
          d + "global4.pickle: byte 39: pickle opcode STACK_GLOBAL names a Python global; snapshots hold plain data "
              "only, refusing to load it");
    // Protocol 2: GLOBAL 'os system', then REDUCE.
    CHECK(read_bytes("global2.pickle", std::string("\x80\x02") + "cos\nsystem\nX\x02\x00\x00\x00id\x85R.") ==
          d + "global2.pickle: byte 2: pickle opcode GLOBAL names a Python global; snapshots hold plain data only, "
              "refusing to load it");
    CHECK(read_bytes("reduce.pickle", from_hex("80 02 4e 29 52 2e")) ==
          d + "reduce.pickle: byte 4: pickle opcode REDUCE builds a Python object; snapshots hold plain data only, "
              "refusing to load it");
  }
  SECTION("unknown and unsupported opcodes") {
    CHECK(read_bytes("unknown.pickle", from_hex("80 04 ff 2e")) ==
          d + "unknown.pickle: byte 2: unknown pickle opcode 0xff (not a pickle, or a newer protocol than 5)");
    CHECK(read_bytes("set.pickle", from_hex("80 04 8f 94 2e")) ==
          d + "set.pickle: byte 2: pickle opcode EMPTY_SET is not supported (a snapshot holds only dicts, lists, "
              "tuples, strings, numbers, booleans and None)");
    CHECK(read_bytes("trailing.pickle", from_hex("80 04 4e 2e 4e")) ==
          d + "trailing.pickle: byte 4: 1 byte of unexpected data after the pickle's STOP opcode");
    CHECK(read_bytes("underflow.pickle", from_hex("80 04 61 2e")) ==
          d + "underflow.pickle: byte 2: malformed pickle: APPEND with nothing on the stack to take");
    CHECK(read_bytes("nomark.pickle", from_hex("80 04 5d 65 2e")) ==
          d + "nomark.pickle: byte 3: malformed pickle: APPENDS without a preceding MARK");
    CHECK(read_bytes("memo.pickle", from_hex("80 04 68 07 2e")) ==
          d + "memo.pickle: byte 2: malformed pickle: BINGET refers to memo entry 7, which was never stored");
    CHECK(read_bytes("utf8.pickle", from_hex("80 04 8c 02 c3 28 2e")) ==
          d + "utf8.pickle: byte 2: SHORT_BINUNICODE: the string is not valid UTF-8");
  }
  SECTION("a wrong-typed field names its path") {
    pickle::Writer w;
    w.begin_dict();
    w.key("segments");
    w.begin_list();
    w.item();
    w.begin_dict();
    for (const char* k : {"device", "address", "total_size", "allocated_size", "active_size", "stream"}) {
      w.key(k);
      w.integer(0);
    }
    w.key("segment_type");
    w.str("large");
    w.key("blocks");
    w.begin_list();
    w.item();
    w.begin_dict();
    w.key("size");
    w.str("2097152");
    w.end();
    w.end();
    w.end();
    w.end();
    w.end();
    CHECK(read_bytes("typed.pickle", w.finish()) ==
          d + "typed.pickle: segments[0].blocks[0].size: expected an integer, got str");
    CHECK(read_bytes("typed.json", R"({"segments": [{"device": 0, "address": 0, "total_size": 0, "allocated_size": 0,
        "active_size": 0, "stream": 0, "segment_type": "large", "blocks": [{"size": "2097152"}]}]})") ==
          d + "typed.json: segments[0].blocks[0].size: expected an integer, got string");
    CHECK(read_bytes("missing.json", R"({"segments": [{"device": 0}]})") ==
          d + "missing.json: segments[0]: missing key 'address'");
    CHECK(read_bytes("negative.json", R"({"segments": [{"device": 0, "address": 0, "total_size": -4}]})") ==
          d + "negative.json: segments[0].total_size: expected a non-negative integer, got -4");
    CHECK(read_bytes("segtype.json", R"({"segments": [{"device": 0, "address": 0, "total_size": 0,
        "allocated_size": 0, "active_size": 0, "stream": 0, "segment_type": "huge", "blocks": []}]})") ==
          d + "segtype.json: segments[0].segment_type: expected 'large' or 'small', got 'huge'");
  }
  SECTION("an unknown trace action names its index") {
    CHECK(read_bytes("action.json", R"({"segments": [], "device_traces": [[
        {"action": "alloc", "addr": 4096, "size": 512, "stream": 0},
        {"action": "teleport", "addr": 4096, "size": 512, "stream": 0}]]})") ==
          d + "action.json: device_traces[0][1].action: unknown action 'teleport' (expected alloc, free_requested, "
              "free_completed, segment_alloc, segment_free, segment_map, segment_unmap, snapshot or oom)");
  }
  SECTION("a dict shared through the pickle memo") {
    // Python: b = {block}; seg['blocks'] = [b, b]; pickle.dumps({'segments': [seg]}, 2)
    const std::string shared = from_hex(
        "80 02 7d 71 00 58 08 00 00 00 73 65 67 6d 65 6e 74 73 71 01 5d 71 02 7d 71 03 28 58 06 00 00 00 64 65 76 69 "
        "63 65 71 04 4b 00 58 07 00 00 00 61 64 64 72 65 73 73 71 05 4d 00 10 58 0a 00 00 00 74 6f 74 61 6c 5f 73 69 "
        "7a 65 71 06 4a 00 00 20 00 58 0e 00 00 00 61 6c 6c 6f 63 61 74 65 64 5f 73 69 7a 65 71 07 4b 00 58 0b 00 00 "
        "00 61 63 74 69 76 65 5f 73 69 7a 65 71 08 4b 00 58 0e 00 00 00 72 65 71 75 65 73 74 65 64 5f 73 69 7a 65 71 "
        "09 4b 00 58 06 00 00 00 73 74 72 65 61 6d 71 0a 4b 00 58 0c 00 00 00 73 65 67 6d 65 6e 74 5f 74 79 70 65 71 "
        "0b 58 05 00 00 00 73 6d 61 6c 6c 71 0c 58 0f 00 00 00 73 65 67 6d 65 6e 74 5f 70 6f 6f 6c 5f 69 64 71 0d 4b "
        "00 4b 00 86 71 0e 58 0d 00 00 00 69 73 5f 65 78 70 61 6e 64 61 62 6c 65 71 0f 89 58 06 00 00 00 66 72 61 6d "
        "65 73 71 10 5d 71 11 58 06 00 00 00 62 6c 6f 63 6b 73 71 12 5d 71 13 28 7d 71 14 28 68 05 4d 00 10 58 04 00 "
        "00 00 73 69 7a 65 71 15 4a 00 00 20 00 68 09 4b 00 58 05 00 00 00 73 74 61 74 65 71 16 58 08 00 00 00 69 6e "
        "61 63 74 69 76 65 71 17 68 10 5d 71 18 75 68 14 65 75 61 73 2e");
    CHECK(read_bytes("shared.pickle", shared) ==
          d + "shared.pickle: segments[0].blocks[1]: this dict also appears elsewhere in the file (a shared "
              "reference); a snapshot never shares one");
  }
}

TEST_CASE("hostile pickles fail cleanly: deep nesting and a list that contains itself") {
  // 200,000 nested lists: ] x N, then APPEND x (N-1), STOP. Parsing is iterative, freeing is flat.
  const std::size_t n = 200000;
  std::string deep = "\x80\x04";
  deep += std::string(n, ']');
  deep += std::string(n - 1, 'a');
  deep += '.';
  CHECK(expect_error([&] { read_snapshot_pickle(deep, "deep"); }) ==
        "deep: not a PyTorch memory snapshot: the top level is a list, not a dict");

  // A memo index of 4,000,000,000 in a 14-byte file: stored aside, not in a 16 GB vector.
  const pickle::Tree far = pickle::parse(from_hex("80 04 4e 72 00 28 6b ee 30 6a 00 28 6b ee 2e"), "far");
  CHECK(far.kind(far.root()) == pickle::Kind::None);

  // {'segments': [], 'allocator_settings': {'x': L}} where L = [L].
  pickle::Writer w;
  w.begin_dict();
  w.key("segments");
  w.begin_list();
  w.end();
  w.key("allocator_settings");
  w.begin_dict();
  w.key("x");
  std::string bytes = w.finish();
  bytes.pop_back();  // drop STOP; finish the structure by hand
  // The memo holds the 3 strings written so far (indices 0-2): the list gets index 3.
  bytes += from_hex("5d 94 68 03 61 75 75 2e");
  CHECK(expect_error([&] { read_snapshot_pickle(bytes, "cycle"); }) ==
        "cycle: allocator_settings.x[0]: this list also appears elsewhere in the file (a shared reference); a "
        "snapshot never shares one");
}

TEST_CASE("block states and trace actions print as PyTorch writes them") {
  CHECK(std::string(to_string(BlockState::ActivePendingFree)) == "active_pending_free");
  CHECK(std::string(to_string(TraceAction::FreeCompleted)) == "free_completed");
  CHECK(std::string(to_string(TraceAction::SegmentUnmap)) == "segment_unmap");
  CHECK(std::string(to_string(TraceAction::Oom)) == "oom");
  // The docstring spelling of the pending state, and annotation entries, are accepted.
  const Snapshot s = read_snapshot_json(R"({"segments": [{"device": 0, "address": 4096, "total_size": 1024,
      "allocated_size": 0, "active_size": 512, "stream": 0, "segment_type": "small",
      "blocks": [{"size": 512, "state": "active_awaiting_free"}, {"size": 512, "state": "inactive"}]}],
      "device_traces": [[{"action": "user_defined", "addr": 0, "size": 0, "stream": 0},
                         {"action": "oom", "device_free": 1024, "size": 2097152, "stream": 0, "time_us": null}]]})",
                                        "legacy.json");
  REQUIRE(s.segments.size() == 1);
  CHECK(s.segments[0].blocks[0].state == BlockState::ActivePendingFree);
  CHECK(s.segments[0].blocks[0].address == 4096);  // derived from the segment when absent
  CHECK(s.segments[0].blocks[1].address == 4608);
  CHECK(s.segments[0].blocks[0].requested_size == 512);
  CHECK(s.segments[0].requested_size == 512);  // sum over active blocks when absent
  REQUIRE(s.device_traces.at(0).size() == 1);
  CHECK(s.device_traces[0][0].action == TraceAction::Oom);
  CHECK(s.device_traces[0][0].device_free == 1024);
  CHECK_FALSE(s.device_traces[0][0].time_us.has_value());
}
