// `headroom replay` and `headroom sample-snapshot` as a user runs them: output, JSON keys, exit codes,
// and bad inputs (each a clear message naming the file or flag, exit 2, no partial output file).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/support/test_data.hpp"

using headroom::test::run_headroom;
using headroom::test::q;
using headroom::test::write;
namespace fs = std::filesystem;

namespace {
}  // namespace

TEST_CASE("replay --json on a real snapshot reports every address matched") {
  fs::path snap = headroom::test::data_file("torch_snapshots/cs336_bcrafton_train_step.pickle");
  auto r = run_headroom("replay " + q(snap) + " --json");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.output);
  CHECK(j["allocations"] == 2162);
  CHECK(j["address_matches"] == 2162);
  CHECK(j["segment_events"] == 0);
  CHECK(j["segment_matches"] == 0);
  CHECK(j["final_state_matches"] == true);
  CHECK(j["first_difference"].is_null());
  CHECK(j["fragmentation"]["final"]["free_blocks"].get<int>() > 0);
}

TEST_CASE("replay text report, timeline CSV and export of the model's state") {
  fs::path dir = headroom::test::temp_dir("replay");
  auto made = run_headroom("sample-snapshot -o " + q(dir / "s.pickle") + " --steps 3");
  REQUIRE(made.exit_code == 0);
  CHECK_THAT(made.output, Catch::Contains("wrote "));
  auto r = run_headroom("replay " + q(dir / "s.pickle") + " --timeline " + q(dir / "t.csv") + " --export " +
                        q(dir / "state.json"));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("at the recorded address (100.00%)"));
  CHECK_THAT(r.output, Catch::Contains("final state      equals the snapshot's segments"));
  std::ifstream t(dir / "t.csv");
  std::string header;
  std::getline(t, header);
  CHECK(header ==
        "event_index,time_us,allocated_bytes,reserved_bytes,reserved_unallocated_bytes,largest_free_block_bytes,"
        "free_blocks");
  // The exported state and the model's own history of the replay replay again, exactly.
  auto again = run_headroom("replay " + q(dir / "state.json") + " --json");
  REQUIRE(again.exit_code == 0);
  auto j = nlohmann::json::parse(again.output);
  CHECK(j["final_state_matches"] == true);
  CHECK(j["allocations"].get<int>() > 0);
  CHECK(j["address_matches"] == j["allocations"]);
  CHECK(j["segment_matches"] == j["segment_events"]);
}

TEST_CASE("replay --what-if with --capacity reports each configuration and whether it OOMs") {
  fs::path snap = headroom::test::data_file("torch_snapshots/cs336_magma27_train_step.pickle");
  auto r = run_headroom("replay " + q(snap) +
                        " --what-if expandable_segments:True --what-if max_split_size_mb:128 --capacity 13GiB --json");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.output);
  REQUIRE(j["what_if"].size() == 3);  // the recorded configuration first, then the two what-ifs
  CHECK(j["what_if"][0]["config"] == "");
  CHECK(j["what_if"][1]["config"] == "expandable_segments:True");
  CHECK(j["what_if"][2]["config"] == "max_split_size_mb:128");
  for (const auto& w : j["what_if"]) {
    CHECK(w["capacity_bytes"] == 13ull << 30);
    CHECK(w["would_oom"].is_boolean());
    CHECK(w["peak_reserved_bytes"].get<std::uint64_t>() <= 13ull << 30);
  }
  auto text = run_headroom("replay " + q(snap) + " --what-if expandable_segments:True");
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.output, Catch::Contains("what-if: the same request stream from an empty cache on a device of unlimited capacity"));
  CHECK_THAT(text.output, Catch::Contains("expandable_segments:True"));
}

TEST_CASE("replay --gpu takes the recorded device from a measured profile, --capacity overrides it") {
  fs::path snap = headroom::test::data_file("torch_snapshots/cs336_magma27_train_step.pickle");
  auto r = run_headroom("replay " + q(snap) + " --gpu h100-80gb-hbm3-measured --what-if expandable_segments:True --json");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.output);
  REQUIRE(j["what_if"].size() == 2);
  for (const auto& w : j["what_if"]) CHECK(w["capacity_bytes"] == 85017493504ull);  // the profile's capacity_bytes
  auto o = run_headroom("replay " + q(snap) + " --gpu h100-80gb-hbm3-measured --capacity 13GiB --what-if \"\" --json");
  REQUIRE(o.exit_code == 0);
  CHECK(nlohmann::json::parse(o.output)["what_if"][0]["capacity_bytes"] == 13ull << 30);
}

TEST_CASE("replay: bad snapshots and flags are clear errors with exit code 2") {
  fs::path dir = headroom::test::temp_dir("badsnap");
  auto err = [&](const std::string& args) {
    auto r = run_headroom(args);
    CHECK(r.exit_code == 2);
    return r.output;
  };
  write(dir / "empty.pickle", "");
  CHECK_THAT(err("replay " + q(dir / "empty.pickle")), Catch::Contains("empty.pickle: the file is empty"));
  write(dir / "text.txt", "hello");
  CHECK_THAT(err("replay " + q(dir / "text.txt")),
             Catch::Contains("text.txt: not a PyTorch memory snapshot (expected a pickle from "
                             "torch.cuda.memory._dump_snapshot() or its JSON form)"));
  // A pickle naming a Python global (protocol 2: PROTO 2, GLOBAL 'os\nsystem\n', STOP).
  write(dir / "evil.pickle", std::string("\x80\x02" "cos\nsystem\n.", 14));
  CHECK_THAT(err("replay " + q(dir / "evil.pickle")),
             Catch::Contains("evil.pickle: byte 2: pickle opcode GLOBAL names a Python global; snapshots hold plain "
                             "data only, refusing to load it"));
  // Truncated: half of a real pickle written by the model.
  REQUIRE(run_headroom("sample-snapshot -o " + q(dir / "full.pickle")).exit_code == 0);
  std::ifstream in(dir / "full.pickle", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  write(dir / "half.pickle", bytes.substr(0, bytes.size() / 2));
  CHECK_THAT(err("replay " + q(dir / "half.pickle")), Catch::Contains("truncated pickle"));
  write(dir / "list.json", "[1, 2]");
  CHECK_THAT(err("replay " + q(dir / "list.json")), Catch::Contains("list.json"));
  CHECK_THAT(err("replay " + q(dir / "missing.pickle")), Catch::Contains("missing.pickle"));
  CHECK_THAT(err("replay " + q(dir / "full.pickle") + " --alloc-conf max_split_size_mb:2"),
             Catch::Contains("--alloc-conf: 'max_split_size_mb:2': CachingAllocator option max_split_size_mb too "
                             "small, must be >= 20"));
  CHECK_THAT(err("replay " + q(dir / "full.pickle") + " --what-if foo:1"),
             Catch::Contains("--what-if: 'foo:1': unrecognized CachingAllocator option 'foo'"));
  CHECK_THAT(err("replay " + q(dir / "full.pickle") + " --what-if expandable_segments:True --capacity '12 parsecs'"),
             Catch::Contains("--capacity: '12 parsecs' is not a byte size"));
  CHECK_THAT(err("replay " + q(dir / "full.pickle") + " --memory-fraction 0.3"),
             Catch::Contains("--memory-fraction: a fraction of the device needs its capacity; give --capacity"));
  CHECK_THAT(err("replay " + q(dir / "full.pickle") + " --capacity 24GiB --memory-fraction 1.5"),
             Catch::Contains("--memory-fraction: expected a fraction in (0, 1], got '1.5'"));
  CHECK_THAT(err("replay " + q(dir / "full.pickle") + " --pytorch-version 2.4"),
             Catch::Contains("--pytorch-version: PyTorch '2.4' is not a release whose out-of-memory text headroom "
                             "writes; expected 2.11"));
  CHECK_THAT(err("replay"), Catch::Contains("snapshot is required"));
  CHECK_THAT(err("replay " + q(dir / "full.pickle") + " --bogus"), Catch::Contains("--bogus"));
}

TEST_CASE("output files are not left behind when a run fails") {
  fs::path dir = headroom::test::temp_dir("nopartial");
  auto r = run_headroom("sample-snapshot -o " + q(dir / "no-such-folder" / "s.pickle"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("cannot write"));
  CHECK(fs::is_empty(dir));
  // replay --timeline into a missing folder: the error names the file, and nothing is written.
  REQUIRE(run_headroom("sample-snapshot -o " + q(dir / "s.json")).exit_code == 0);
  auto t = run_headroom("replay " + q(dir / "s.json") + " --timeline " + q(dir / "nope" / "t.csv"));
  CHECK(t.exit_code == 2);
  CHECK_THAT(t.output, Catch::Contains("t.csv: cannot write"));
}

TEST_CASE("sample-snapshot output is byte-identical for the same seed") {
  fs::path dir = headroom::test::temp_dir("determinism");
  REQUIRE(run_headroom("sample-snapshot -o " + q(dir / "a.pickle") + " --seed 5").exit_code == 0);
  REQUIRE(run_headroom("sample-snapshot -o " + q(dir / "b.pickle") + " --seed 5").exit_code == 0);
  REQUIRE(run_headroom("sample-snapshot -o " + q(dir / "c.pickle") + " --seed 6").exit_code == 0);
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  CHECK(slurp(dir / "a.pickle") == slurp(dir / "b.pickle"));
  CHECK(slurp(dir / "a.pickle") != slurp(dir / "c.pickle"));
}
