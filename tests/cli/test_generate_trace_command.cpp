// `headroom generate-trace`: the same flags give the same bytes, another seed other bytes; the file
// is an Azure trace that `headroom run` replays request for request; bad flags exit 2 and leave
// no file.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/test_data.hpp"

using headroom::test::q;
using headroom::test::run_headroom;
using headroom::test::slurp;
using headroom::test::write;
namespace fs = std::filesystem;

TEST_CASE("generate-trace: deterministic Azure CSV that run replays") {
  const fs::path dir = headroom::test::temp_dir("generate-trace");
  const std::string flags = " --requests 2000 --rate 20 --input-mean 512 --output-mean 64";
  auto a = run_headroom("generate-trace" + flags + " --seed 5 -o " + q(dir / "a.csv"));
  REQUIRE(a.exit_code == 0);
  CHECK_THAT(a.output, Catch::Contains("2000 requests"));
  auto b = run_headroom("generate-trace" + flags + " --seed 5 -o " + q(dir / "b.csv"));
  auto c = run_headroom("generate-trace" + flags + " --seed 6 -o " + q(dir / "c.csv"));
  REQUIRE(b.exit_code == 0);
  REQUIRE(c.exit_code == 0);
  const std::string text = slurp(dir / "a.csv");
  CHECK(text == slurp(dir / "b.csv"));
  CHECK(text != slurp(dir / "c.csv"));
  CHECK(text.rfind("TIMESTAMP,ContextTokens,GeneratedTokens\n2024-01-01 00:00:00.0000000,", 0) == 0);
  CHECK(std::count(text.begin(), text.end(), '\n') == 2001);

  write(dir / "s.yaml", "name: replay\ngpu: {profile: h100-sxm-80gb}\nmodel: {name: Llama-3.1-8B}\nengine: {kind: vllm}\n"
                        "workload: {trace: {path: a.csv}}\n");
  auto r = run_headroom("run " + q(dir / "s.yaml") + " -o " + q(dir / "out") + " --no-progress");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(slurp(dir / "out" / "summary.json"));
  CHECK(j["requests"]["arrived"] == 2000);
  CHECK(j["requests"]["completed"] == 2000);
  // 2000 requests at 20/s: the last arrives about 100 s in.
  CHECK(j["simulated_s"].get<double>() == Approx(100).epsilon(0.2));
}

TEST_CASE("generate-trace: bad flags exit 2 and write nothing") {
  const fs::path dir = headroom::test::temp_dir("generate-trace-bad");
  const fs::path out = dir / "t.csv";
  for (const std::string& bad :
       {std::string("--requests 0 --rate 1"), std::string("--requests 10 --rate -1"), std::string("--requests 10"),
        std::string("--requests 10 --rate 1 --format vidur"), std::string("--requests 10 --rate 1 --input-mean 0"),
        std::string("--requests ten --rate 1")}) {
    INFO(bad);
    auto r = run_headroom("generate-trace " + bad + " -o " + q(out));
    CHECK(r.exit_code == 2);
    CHECK_FALSE(fs::exists(out));
  }
  auto r = run_headroom("generate-trace --requests 10 --rate 1");  // no -o
  CHECK(r.exit_code == 2);
  auto r2 = run_headroom("generate-trace --requests 10 --rate 1 -o " + q(dir / "missing" / "t.csv"));
  CHECK(r2.exit_code == 2);
  CHECK_THAT(r2.output, Catch::Contains("missing"));
}
