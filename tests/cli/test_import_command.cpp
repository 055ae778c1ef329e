// `headroom import` and `headroom run --cmd` as a user runs them (docs/import.md): the scenario on
// stdout or in a file, the command line given after `--` or as one quoted argument, and `run --cmd`
// giving the very outputs of running the imported file.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "tests/support/test_data.hpp"

using headroom::test::headroom_binary;
using headroom::test::q;
using headroom::test::run_shell;
using headroom::test::run_headroom;
using headroom::test::slurp;
using headroom::test::write;
namespace fs = std::filesystem;

namespace {

const std::string kLine =
    "vllm serve meta-llama/Llama-3.1-8B --gpu-memory-utilization 0.85 --max-num-seqs 64 --port 8000 --api-key sk-1";

// A small workload so that each run takes a fraction of a second.
const std::string kImportWorkload =
    "workload:\n"
    "  synthetic:\n"
    "    requests: 200\n"
    "    arrivals: {process: gamma, rate: 20, cv: 3}\n"
    "    input: {dist: lognormal, mean: 3000, cv: 1.0, max: 16000}\n"
    "    output: {dist: lognormal, mean: 200, cv: 1.0, max: 1024}\n";

}  // namespace

TEST_CASE("import: the scenario on stdout, the notes on stderr, after -- or as one argument, never bare") {
  // run_shell appends 2>&1: each redirection here goes before a pipe into cat.
  const auto r = run_shell(q(headroom_binary()) + " import -- " + kLine + " 2>/dev/null | cat");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::StartsWith("# Imported by headroom import (docs/import.md) from vLLM:\n#   vllm serve"));
  CHECK_THAT(r.output, Catch::Contains("engine:\n  kind: vllm\n  gpu_memory_utilization: 0.85\n  max_num_seqs: 64\n"));
  CHECK_THAT(r.output, !Catch::Contains("sk-1"));  // an API key is never repeated
  CHECK_THAT(r.output, Catch::Contains("--max-num-seqs 64 --port ... --api-key ...\n"));
  const auto quoted = run_shell(q(headroom_binary()) + " import '" + kLine + "' 2>/dev/null | cat");
  REQUIRE(quoted.exit_code == 0);
  CHECK(quoted.output == r.output);
  // Without `--` CLI11 would take the line's flags for headroom's own: refused, saying what to do.
  const auto bare = run_headroom("import " + kLine);
  CHECK(bare.exit_code == 2);
  CHECK(bare.output == "headroom: error: engine command line: put -- before it (headroom import [-o FILE] -- vllm ...) "
                       "or quote it as one argument; without -- its flags read as headroom's\n");
  const auto notes = run_shell(q(headroom_binary()) + " import -- " + kLine + " 2>&1 >/dev/null | cat");
  CHECK(notes.output ==
        "headroom import: gpu: the quickstart's h100-sxm-80gb (no --gpu given)\n"
        "headroom import: workload: the quickstart's synthetic workload (no --workload given)\n"
        "headroom import: ignored: --port, --api-key\n");
}

TEST_CASE("run --cmd gives the same outputs as running the imported scenario") {
  const fs::path dir = headroom::test::temp_dir("import-run");
  write(dir / "w.yaml", kImportWorkload);
  const auto imported = run_headroom("import -o " + q(dir / "s.yaml") + " --workload " + q(dir / "w.yaml") +
                                     " --gpu h100-sxm-80gb -- " + kLine);
  REQUIRE(imported.exit_code == 0);
  CHECK_THAT(imported.output, Catch::Contains("headroom import: wrote " + (dir / "s.yaml").string()));
  const auto from_file = run_headroom("run " + q(dir / "s.yaml") + " --no-progress -o " + q(dir / "a"));
  REQUIRE(from_file.exit_code == 0);
  const auto from_cmd = run_headroom("run --cmd '" + kLine + "' --workload " + q(dir / "w.yaml") +
                                     " --gpu h100-sxm-80gb --no-progress -o " + q(dir / "b"));
  REQUIRE(from_cmd.exit_code == 0);
  CHECK_THAT(from_cmd.output, Catch::Contains("vllm-Llama-3.1-8B: vLLM on"));
  CHECK_THAT(from_cmd.output, Catch::Contains("--cmd            ignored: --port, --api-key"));
  for (const char* f : {"summary.json", "timeline.csv", "requests.csv", "scenario.resolved.yaml"})
    CHECK(slurp(dir / "a" / f) == slurp(dir / "b" / f));
  fs::remove_all(dir);
}

TEST_CASE("import and run --cmd: bad input exits 2 and writes nothing") {
  const fs::path dir = headroom::test::temp_dir("import-bad");
  const auto r = run_headroom("import -o " + q(dir / "s.yaml") + " -- vllm serve Llama-3.1-8B --enable-lora");
  CHECK(r.exit_code == 2);
  CHECK(r.output ==
        "headroom: error: engine command line: --enable-lora (LoRA adapter slots) changes memory in ways headroom "
        "does not model; remove it to simulate the rest (docs/import.md#vllm)\n");
  CHECK(fs::is_empty(dir));
  const auto both = run_headroom("run x.yaml --cmd 'vllm serve Llama-3.1-8B' -o " + q(dir / "out"));
  CHECK(both.exit_code == 2);
  CHECK(both.output == "headroom: error: --cmd: give a scenario file or --cmd, not both (got 'x.yaml')\n");
  CHECK(fs::is_empty(dir));
  fs::remove_all(dir);
}
