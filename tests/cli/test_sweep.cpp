// `headroom sweep`: a grid stopped halfway (--max-points, as a kill would leave it) resumes without
// redoing finished points and ends with the table a one-shot run writes, byte for byte; bad axis
// values fail with the grid's file:line before anything runs; MPI ranks (mpirun -n 2, in an MPI
// build) give the local sweep's table.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/test_data.hpp"

using headroom::test::run_headroom;
using headroom::test::q;
using headroom::test::write;
namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream b;
  b << in.rdbuf();
  return b.str();
}

// vLLM on one H100 under 200 requests of the quickstart's workload; 2 models × 2 policies × 3
// utilisations = 12 points.
const char* kGrid = R"(name: t
base:
  name: sweep-test
  seed: 1
  gpu: {profile: h100-sxm-80gb}
  model: {name: Llama-3.1-8B}
  engine: {kind: vllm}
  workload:
    synthetic:
      requests: 200
      arrivals: {process: gamma, rate: 12, cv: 4}
      input: {dist: lognormal, mean: 1500, cv: 1.2, max: 16384}
      output: {dist: lognormal, mean: 250, cv: 1.0, max: 2048}
axes:
  model: [Llama-3.1-8B, Qwen2.5-7B]
  policy: [engine, {fragmentation_buffer: {k: 2}}]
  gpu_memory_utilization: [0.85, 0.9, 0.95]
)";

fs::path grid_file(const std::string& text = kGrid) {
  fs::path dir = headroom::test::temp_dir("sweep-grid");
  write(dir / "grid.yaml", text);
  return dir / "grid.yaml";
}

std::size_t files_in(const fs::path& dir) {
  std::size_t n = 0;
  if (fs::exists(dir))
    for (const auto& e : fs::directory_iterator(dir)) n += e.is_regular_file() ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("sweep: a sweep stopped halfway resumes without redoing finished points and ends with the one-shot table") {
  const fs::path grid = grid_file();
  const fs::path once = headroom::test::temp_dir("sweep-once");
  auto r = run_headroom("sweep " + q(grid) + " -o " + q(once) + " -j 2");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("sweep t: 12 points (model × policy × gpu_memory_utilization), 0 resumed, 12 run") !=
        std::string::npos);
  CHECK(files_in(once / "points") == 12);

  // The table: grid order (last axis fastest), the axes as written, known start-up figures.
  const nlohmann::json all = nlohmann::json::parse(read(once / "results.json"));
  REQUIRE(all["points"].size() == 12);
  const nlohmann::json& p1 = all["points"][1];  // Llama-3.1-8B, engine, 0.9
  CHECK(p1["coordinates"]["model"] == "Llama-3.1-8B");
  CHECK(p1["coordinates"]["policy"] == "engine");
  CHECK(p1["coordinates"]["gpu_memory_utilization"] == "0.9");
  // vLLM's defaults on one H100 (docs/run.md), its 32 MiB rotary cache allocated (§10).
  CHECK(p1["result"]["kv_tokens"] == 421856);
  CHECK(p1["result"]["completed"] == 200);
  CHECK(all["points"][4]["coordinates"]["policy"] == "{fragmentation_buffer: {k: 2}}");
  CHECK(all["points"][6]["coordinates"]["model"] == "Qwen2.5-7B");
  // A higher utilisation gives more KV: the knob reached the engine.
  CHECK(all["points"][0]["result"]["kv_tokens"] < p1["result"]["kv_tokens"]);
  CHECK(p1["result"]["kv_tokens"] < all["points"][2]["result"]["kv_tokens"]);
  const std::string csv = read(once / "results.csv");
  CHECK(csv.rfind("index,id,model,policy,gpu_memory_utilization,started,kv_tokens,", 0) == 0);
  CHECK(csv.find(",{fragmentation_buffer: {k: 2}},") != std::string::npos);

  // Stopped after 5 points, as a kill would leave it: 5 point files, no table.
  const fs::path resumed = headroom::test::temp_dir("sweep-resumed");
  r = run_headroom("sweep " + q(grid) + " -o " + q(resumed) + " -j 2 --max-points 5");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("0 resumed, 5 run") != std::string::npos);
  CHECK(r.output.find("stopped after 5 points (--max-points): 7 remain") != std::string::npos);
  CHECK(files_in(resumed / "points") == 5);
  CHECK_FALSE(fs::exists(resumed / "results.csv"));
  std::map<fs::path, fs::file_time_type> first;
  for (const auto& e : fs::directory_iterator(resumed / "points")) first[e.path()] = fs::last_write_time(e.path());
  // --collect refuses an unfinished grid.
  r = run_headroom("sweep " + q(grid) + " -o " + q(resumed) + " --collect");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("7 of 12 points have not finished (the first is point 5)") != std::string::npos);

  // The restart runs only the other 7 and leaves the finished files untouched.
  r = run_headroom("sweep " + q(grid) + " -o " + q(resumed) + " -j 2");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("5 resumed, 7 run") != std::string::npos);
  for (const auto& [path, time] : first) CHECK(fs::last_write_time(path) == time);
  CHECK(read(resumed / "results.csv") == csv);
  CHECK(read(resumed / "results.json") == read(once / "results.json"));

  // Run again: nothing left to do, the same table again (and --collect writes it too).
  r = run_headroom("sweep " + q(grid) + " -o " + q(resumed) + " -j 2");
  CHECK(r.output.find("12 resumed, 0 run") != std::string::npos);
  fs::remove(resumed / "results.csv");
  r = run_headroom("sweep " + q(grid) + " -o " + q(resumed) + " --collect");
  CHECK(r.exit_code == 0);
  CHECK(read(resumed / "results.csv") == csv);

  // A file under a point's name that is not its result is an error naming it, not a silent skip.
  const fs::path some = first.begin()->first;
  write(some, "{\"id\": \"x\"}");
  r = run_headroom("sweep " + q(grid) + " -o " + q(resumed));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find(some.string() + ": not the result of point") != std::string::npos);
}

TEST_CASE("sweep: bad axis values fail with the grid's file and line before any point runs") {
  auto expect = [](const std::string& axes, const std::string& message) {
    std::string text = kGrid;
    text = text.substr(0, text.find("axes:")) + "axes:\n" + axes;
    const fs::path grid = grid_file(text);
    const fs::path out = grid.parent_path() / "out";
    auto r = run_headroom("sweep " + q(grid) + " -o " + q(out));
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find(grid.string() + ":" + message) != std::string::npos);
    CHECK(files_in(out / "points") == 0);
  };
  expect("  gpu_memory_utilisation: [0.9]\n",
         "15:3: unknown key 'axes.gpu_memory_utilisation'; did you mean 'gpu_memory_utilization'?");
  expect("  policy: [engine]\n  gpu_memory_utilization: [0.9, 1.5]\n",
         "16:33: key 'axes.gpu_memory_utilization': value '1.5' at point 1 (policy=engine, gpu_memory_utilization=1.5): "
         "--knob gpu_memory_utilization: 1.5 is not a fraction in (0, 1]");
  expect("  mem_fraction_static: [0.8]\n", "15:25: key 'axes.mem_fraction_static': value '0.8' at point 0 (mem_fraction_static=0.8): --knob mem_fraction_static: a knob of sglang, and this scenario's engine is vllm");
  expect("  model: [Llama-3.1-8B, Llama-9-1T]\n", "15:25: key 'axes.model': value 'Llama-9-1T' at point 1 (model=Llama-9-1T): unknown model 'Llama-9-1T'");
  expect("  trace: [no/such/trace.csv]\n", "15:11: key 'axes.trace': no such trace file '");
  expect("  policy: [engine, profiled, engine]\n", "15:30: key 'axes.policy': value 'engine' appears twice");
  expect("  policy: [enigne]\n", "15:12: key 'axes.policy[0]': unknown policy 'enigne'; did you mean 'engine'?");
  expect("  gpu: []\n", "15:8: key 'axes.gpu': expected a non-empty list of values");
}

#ifdef HEADROOM_MPIEXEC
TEST_CASE("sweep: two MPI ranks give the local sweep's results table") {
  const fs::path grid = grid_file();
  const fs::path local = headroom::test::temp_dir("sweep-local");
  auto r = run_headroom("sweep " + q(grid) + " -o " + q(local) + " -j 2");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // Half the points already finished (as a killed MPI sweep would leave them): rank 0 skips them.
  const fs::path ranks = headroom::test::temp_dir("sweep-mpi");
  r = run_headroom("sweep " + q(grid) + " -o " + q(ranks) + " -j 1 --max-points 6");
  REQUIRE(r.exit_code == 0);
  r = headroom::test::run_shell(std::string(HEADROOM_MPIEXEC) + " --allow-run-as-root --oversubscribe -n 2 " +
                                q(headroom::test::headroom_binary()) + " sweep " + q(grid) + " -o " + q(ranks) +
                                " -j 1");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("sweep t: 12 points (model × policy × gpu_memory_utilization), 6 resumed, 6 run on 2 ranks") !=
        std::string::npos);
  CHECK(read(ranks / "results.csv") == read(local / "results.csv"));
  CHECK(read(ranks / "results.json") == read(local / "results.json"));

  // Ranks that do not share a folder (each its own working directory, as on two machines): rank 1's
  // earlier finished points go to rank 0 first and are not run again; its new ones are gathered.
  const fs::path a = headroom::test::temp_dir("sweep-rank0"), b = headroom::test::temp_dir("sweep-rank1");
  r = headroom::test::run_shell("cd " + q(b) + " && " + q(headroom::test::headroom_binary()) + " sweep " + q(grid) +
                                " -o out -j 1 --max-points 4");
  REQUIRE(r.exit_code == 0);
  const std::string rank = q(headroom::test::headroom_binary()) + " sweep " + q(grid) + " -o out -j 1";
  r = headroom::test::run_shell(std::string(HEADROOM_MPIEXEC) + " --allow-run-as-root --oversubscribe -n 1 --wdir " +
                                q(a) + " " + rank + " : -n 1 --wdir " + q(b) + " " + rank);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("4 resumed, 8 run on 2 ranks") != std::string::npos);
  CHECK(files_in(a / "out" / "points") == 12);
  CHECK(files_in(b / "out" / "points") == 8);  // its 4 earlier points and the 4 it ran now
  CHECK(read(a / "out" / "results.csv") == read(local / "results.csv"));
}
#else
TEST_CASE("sweep: a build without MPI refuses to run as several mpirun ranks") {
  const fs::path grid = grid_file();
  const fs::path out = headroom::test::temp_dir("sweep-nompi");
  auto r = headroom::test::run_shell("OMPI_COMM_WORLD_SIZE=2 " + q(headroom::test::headroom_binary()) + " sweep " +
                                     q(grid) + " -o " + q(out));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("started as one of 2 MPI ranks, but this headroom was built without MPI") != std::string::npos);
  CHECK(files_in(out / "points") == 0);
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") FAIL("under CI=true headroom must be built with MPI (libopenmpi-dev)");
}
#endif
