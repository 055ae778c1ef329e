// The OOM message against the ones PyTorch 2.11 raised on an H100 (issue 19 item 3): the faithful
// replay of ../shared/gpu's oom_fraction030_s34 (set_per_process_memory_fraction(0.30), three OOMs)
// on the recorded device writes each of the three messages of its meta file byte for byte.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/allocator/replay.hpp"
#include "sim/allocator/snapshot.hpp"
#include "sim/core/error.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom;
using namespace headroom::alloc;

TEST_CASE("OOM message: the faithful replay of a recorded fraction-capped run writes PyTorch 2.11's three messages") {
  const auto dir = test::gpu_file("h100-2026-11-25/recordings");
  const Snapshot snap = read_snapshot(dir / "oom_fraction030_s34.pickle.gz");
  std::ifstream meta_in(dir / "oom_fraction030_s34.meta.json");
  const nlohmann::json meta = nlohmann::json::parse(meta_in);
  REQUIRE(meta["torch"] == "2.11.0+cu130");

  ReplayOptions o;
  o.capacity = 85017493504;  // the meta file's mem_get_info total (79.18 GiB)
  o.memory_fraction = 0.30;  // meta "fraction"
  // "this process has" is NVML's per-process figure, which the snapshot does not hold: the three
  // messages bound it to reserved + 686.2..690.2 MiB (cudaMemGetInfo's total - free - reserved is
  // 698.8 MiB at each OOM); 688 MiB is inside that window.
  o.context = 688 * MiB;
  o.pytorch = parse_pytorch_release(meta["torch"].get<std::string>(), "meta torch");
  const ReplayReport r = replay_snapshot(snap, o);
  CHECK(r.address_matches == r.allocations);
  CHECK(r.final_state_matches);
  REQUIRE(r.recorded_ooms == 3);
  REQUIRE(r.model_oom_infos.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    INFO("OOM " << i);
    CHECK(r.model_oom_infos[i].message() == meta["ooms"][i]["message"].get<std::string>());
  }
  // Without a fraction there is no "allowed" clause; without a capacity the total is the replay's
  // unlimited device, which is why the clause and the capacity are the user's to give.
  ReplayOptions plain;
  const ReplayReport p = replay_snapshot(snap, plain);
  REQUIRE(p.model_oom_infos.size() == 3);
  CHECK(p.model_oom_infos[0].message().find(" allowed; ") == std::string::npos);
}

TEST_CASE("OOM message: the PyTorch release is 2.11 or a clear error") {
  CHECK(parse_pytorch_release("2.11", "--pytorch-version") == PytorchRelease::v2_11);
  CHECK(parse_pytorch_release("2.11.0+cu130", "--pytorch-version") == PytorchRelease::v2_11);
  CHECK(std::string(to_string(kNewestPytorch)) == "2.11");
  CHECK_THROWS_WITH(parse_pytorch_release("2.4", "--pytorch-version"),
                    "--pytorch-version: PyTorch '2.4' is not a release whose out-of-memory text headroom writes; "
                    "expected 2.11 (the newest, the default); older releases' texts are not sourced "
                    "(docs/replay-and-allocator.md)");
}
