// `headroom compare` on the incident scenarios (the verdicts each must produce under each policy),
// `headroom tune` on the quickstart (re-running `run` at the value found does not run out of memory,
// one step higher does), and bad policies, knobs and ranges.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/support/json_file.hpp"
#include "tests/support/report_page.hpp"
#include "tests/support/test_data.hpp"

using headroom::test::run_headroom;
using headroom::test::source_dir;
using headroom::test::page_data;
using headroom::test::q;
using headroom::test::read_json;
using headroom::test::slurp;
using headroom::test::write;
namespace fs = std::filesystem;

namespace {

// comparison.json's rows by policy kind, for a scenario file.
std::map<std::string, nlohmann::json> compare_file(const fs::path& scenario) {
  fs::path out = headroom::test::temp_dir("compare");
  auto r = run_headroom("compare " + q(scenario) + " -o " + q(out));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::map<std::string, nlohmann::json> rows;
  const nlohmann::json j = read_json(out / "comparison.json");
  for (const auto& p : j["policies"]) rows[p["kind"].get<std::string>()] = p;
  return rows;
}

// The same for one of scenarios/.
std::map<std::string, nlohmann::json> compare(const std::string& scenario) {
  return compare_file(source_dir() / "scenarios" / scenario);
}

bool startup_oom(const nlohmann::json& row) { return !row["started"].get<bool>() && !row["first_oom"].is_null(); }
bool serving_oom(const nlohmann::json& row) { return row["started"].get<bool>() && !row["first_oom"].is_null(); }
bool clean(const nlohmann::json& row) { return row["started"].get<bool>() && row["first_oom"].is_null(); }

}  // namespace

TEST_CASE("incident: a workspace sized by the maximum context fails start-up on a shared GPU") {
  auto rows = compare("incident-shared-gpu-workspace.yaml");
  CHECK(startup_oom(rows["engine"]));
  CHECK(rows["engine"]["startup_failure"]["stage"] == "attention workspace");
  CHECK(rows["engine"]["first_oom"]["tried_bytes"] == 16640ull * 1024 * 1024);  // 16.25 GiB
  CHECK(clean(rows["workspace_aware"]));
  // 512 tokens (64 MiB) fewer than before SGLang's float32 rotary cache was allocated (§10).
  CHECK(rows["workspace_aware"]["kv_tokens"] == 37488);
  CHECK(rows["workspace_aware"]["ooms_avoided"] == 1);
  CHECK(startup_oom(rows["workspace_cap"]));
  CHECK(startup_oom(rows["static_fraction"]));
}

TEST_CASE("incident: per-layer MLA decode buffers the profile run never saw") {
  auto rows = compare("incident-mla-decode-buffers.yaml");
  CHECK(startup_oom(rows["engine"]));
  CHECK(rows["engine"]["startup_failure"]["stage"] == "sampler warm-up");
  CHECK(startup_oom(rows["profiled"]));
  // Its 2 GiB buffer covered the 1.95 GiB of decode buffers, not them and the 102 graph execs
  // (61 layers × 0.1875 MiB each, 1.14 GiB outside PyTorch).
  CHECK(startup_oom(rows["fragmentation_buffer"]));
  CHECK(clean(rows["auto_profile"]));
  CHECK(clean(rows["shared_decode_buffer"]));
  // The shared buffer costs no KV capacity; the others give some up.
  CHECK(rows["shared_decode_buffer"]["kv_tokens"] == rows["engine"]["kv_tokens"]);
  CHECK(rows["auto_profile"]["kv_tokens"].get<std::int64_t>() < rows["engine"]["kv_tokens"].get<std::int64_t>());
  CHECK(rows["fragmentation_buffer"]["kv_given_up"].get<double>() > 0);
}

TEST_CASE("incident: a sampler spike at 1024 sequences with a 152k vocabulary") {
  auto rows = compare("incident-sampler-spike.yaml");
  CHECK(serving_oom(rows["engine"]));
  CHECK(rows["engine"]["first_oom"]["tensor"] == "masked_logits");
  CHECK(rows["engine"]["first_oom"]["tried_bytes"] == 594ull * 1024 * 1024);  // 1024 × 152,064 × 4 B
  CHECK(serving_oom(rows["static_fraction"]));
  CHECK(clean(rows["profiled"]));
  CHECK(clean(rows["fragmentation_buffer"]));
  // Its stress decodes 256 rows, not 1024, but mem_fraction 0.95 (PR #1273's final default) keeps
  // 5% of its budget back, which covers the 594 MiB.
  CHECK(clean(rows["auto_profile"]));
  CHECK(serving_oom(rows["release_on_oom"])); // 256 MiB does not cover 594 MiB
  CHECK(rows["profiled"]["ooms_avoided"] == 1);
  CHECK(rows["profiled"]["requests"]["completed"] == 3000);
}

TEST_CASE("incident: per-layer buffers pin the cache and a burst's mixed batches fail on fragmentation") {
  // The committed scenario runs 2 hours of trace (its verdicts are in its header, measured). Here the
  // same engine, model and burst on the 180 s around it: the original trace's 2680-2770 s, stretched
  // 2x, the burst 40 s in. The buffers are still created by the first decode steps, in the cache the
  // profile run left, 40 s of mixed batches split what is left around them, and every policy's
  // verdict is the one it has on the full trace (the engine fails on 918 MiB of cub's buffers inside
  // the sampler's sort, 12 B × 620 × 129,280, with 1.91 GiB reserved but unallocated and 12 MiB free;
  // 920 MiB at 621 rows, 1.89 GiB and 32 MiB before the 20 MiB rotary cache per rank was allocated,
  // serving-memory-model.md §10).
  std::string text = slurp(source_dir() / "scenarios" / "incident-fragmentation-after-mixed-batches.yaml");
  const std::string full = "  transforms:\n    time_scale: 2.0\n    burst: {at_s: 5400, duration_s: 120, factor: 8}\n";
  const std::size_t at = text.find(full);
  REQUIRE(at != std::string::npos);
  text.replace(at, full.size(),
               "  transforms:\n    window: {start_s: 2680, end_s: 2770}\n    time_scale: 2.0\n"
               "    burst: {at_s: 40, duration_s: 120, factor: 8}\n");
  const fs::path dir = headroom::test::temp_dir("fragmentation-incident");
  write(dir / "incident.yaml", text);
  auto rows = compare_file(dir / "incident.yaml");
  const nlohmann::json& engine = rows["engine"];
  REQUIRE(serving_oom(engine));
  // The sampler's allocation that fails is cub's scratch inside PyTorch's stable sort (12 B a row
  // and vocabulary entry), the largest of the step since the sort's scratch is modelled (before: the
  // 290 MiB masked_logits, 4 B a row and entry).
  CHECK(engine["first_oom"]["tensor"] == "cub_temp_storage");
  // Fragmentation: more of the cache is free than the sampler asks for, but not in one piece.
  const auto tried = engine["first_oom"]["tried_bytes"].get<std::uint64_t>();
  CHECK(engine["first_oom"]["reserved_unallocated_bytes"].get<std::uint64_t>() > tried);
  CHECK(engine["first_oom"]["free_bytes"].get<std::uint64_t>() < tried);
  CHECK(serving_oom(rows["profiled"]));
  CHECK(rows["profiled"]["first_oom"]["time_s"] == engine["first_oom"]["time_s"]);
  CHECK(clean(rows["fragmentation_buffer"]));
  CHECK(rows["fragmentation_buffer"]["kv_tokens"].get<std::int64_t>() < engine["kv_tokens"].get<std::int64_t>());
  // mem_fraction 0.95 (PR #1273's final default) keeps 5% of the measured budget out of the cache.
  CHECK(clean(rows["auto_profile"]));
  CHECK(rows["auto_profile"]["kv_tokens"].get<std::int64_t>() < engine["kv_tokens"].get<std::int64_t>());
  CHECK(serving_oom(rows["release_on_oom"]));
  CHECK(!rows["release_on_oom"]["canary_released_s"].is_null());
  CHECK(clean(rows["shared_decode_buffer"]));
  CHECK(rows["shared_decode_buffer"]["kv_tokens"] == engine["kv_tokens"]);
  CHECK(clean(rows["allocator"]));
}

TEST_CASE("tune on the quickstart: run at the value found does not OOM, one step higher does") {
  fs::path out = headroom::test::temp_dir("tune");
  auto r = run_headroom("tune " + q(source_dir() / "scenarios" / "quickstart.yaml") +
                        " --knob gpu_memory_utilization --range 0.98:0.99 --points 11 --stress none -o " + q(out));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  nlohmann::json t = read_json(out / "tune.json");
  REQUIRE(t["best"].is_number());
  REQUIRE(t["first_failing"].is_number());
  const double best = t["best"].get<double>(), failing = t["first_failing"].get<double>();
  CHECK(failing == Approx(best + t["step"].get<double>()));
  CHECK(t["frontier"].size() == 11);
  // report.html: the frontier with the best value marked, rebuilt byte for byte by `headroom report`.
  const std::string written = slurp(out / "report.html");
  fs::remove(out / "report.html");
  REQUIRE(run_headroom("report " + q(out)).exit_code == 0);
  CHECK(slurp(out / "report.html") == written);
  nlohmann::json page = page_data(written);
  CHECK(page["kind"] == "tune");
  CHECK_THAT(page["header"]["verdict"].get<std::string>(),
             Catch::StartsWith(fmt::format("gpu_memory_utilization = {:.6g} is the largest value that never runs out of memory",
                                           best)));
  REQUIRE(page["views"].size() == 2);
  CHECK(page["views"][0]["type"] == "frontier");
  CHECK(page["views"][0]["best"] == t["best"]);
  CHECK(page["views"][0]["regions"].size() >= 1);  // the values past the best fail
  CHECK(page["views"][1]["rows"].size() == 11);
  std::ifstream csv(out / "frontier.csv");
  std::string header;
  std::getline(csv, header);
  CHECK(header == "value,started,kv_tokens,oom,failed_variant,ttft_p99_s,tpot_p99_s,preemptions,slo_met,overloaded,failure");
  // A failed value has no latency (its run was cut short): null in tune.json, empty in frontier.csv,
  // a gap in the chart; a passing one has its figure (issue 16).
  std::size_t failed_points = 0;
  for (std::size_t i = 0; i < t["frontier"].size(); ++i) {
    const nlohmann::json& p = t["frontier"][i];
    std::string row;
    std::getline(csv, row);
    INFO(row);
    const auto cells = [&] {
      std::vector<std::string> c;
      std::stringstream ss(row);
      for (std::string cell; std::getline(ss, cell, ',') && c.size() < 7;) c.push_back(cell);
      return c;
    }();
    REQUIRE(cells.size() == 7);
    if (p["oom"] == true) {
      ++failed_points;
      CHECK(p["ttft_p99_s"].is_null());
      CHECK(p["tpot_p99_s"].is_null());
      CHECK(page["views"][0]["ttft_p99_s"][i].is_null());
      CHECK(cells[5].empty());
      CHECK(cells[6].empty());
    } else {
      CHECK(p["ttft_p99_s"].get<double>() > 0);
      CHECK(page["views"][0]["ttft_p99_s"][i] == p["ttft_p99_s"]);
      CHECK(std::stod(cells[5]) > 0);
    }
  }
  CHECK(failed_points >= 1);

  // Re-run `run` at both values with the quickstart's workload.
  std::ifstream in(source_dir() / "scenarios" / "quickstart.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  auto run_at = [&](double value) {
    std::string s = text;
    s.replace(s.find("kind: vllm"), 10, fmt::format("kind: vllm\n  gpu_memory_utilization: {}", value));
    fs::path file = out / fmt::format("at-{}.yaml", value);
    write(file, s);
    auto rr = run_headroom("run " + q(file) + " --json -o " + q(out / fmt::format("run-{}", value)));
    INFO(rr.output);
    REQUIRE(rr.exit_code == 0);
    return read_json(out / fmt::format("run-{}", value) / "summary.json");
  };
  nlohmann::json ok = run_at(best);
  CHECK(ok["startup"]["ok"] == true);
  CHECK(ok["oom"].is_null());
  nlohmann::json bad = run_at(failing);
  CHECK((bad["startup"]["ok"] == false || !bad["oom"].is_null()));
}

TEST_CASE("tune's answer: the cliff bisected to the resolution, a margin below it, the engine's flag") {
  // The quickstart's cliff lies between 0.984 (starts) and 0.985 (fails vLLM's sampler warm-up, which
  // sorts 1024 rows with PyTorch's stable sort, once the FULL graphs' FA3 accumulators are in the pool
  // and the 102 graphs' executables, 612 MiB, outside it; docs/tune.md): from the grid 0.97 .. 1 the
  // bisection probes 0.985 at resolution 0.005, then 0.985 and 0.9825 at 0.0025.
  fs::path out = headroom::test::temp_dir("tune-answer");
  auto r = run_headroom("tune " + q(source_dir() / "scenarios" / "quickstart.yaml") +
                        " --knob gpu_memory_utilization --range 0.97:1.0 --points 4 --stress none -o " + q(out / "a"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("  cliff        safe to 0.005, by variant: base 0.98; spread 0\n"));
  CHECK_THAT(r.output, Catch::Contains("  use          --gpu-memory-utilization 0.97 (gpu_memory_utilization = 0.97: "
                                       "0.01 below the worst variant's safe value 0.98; margin the larger of 0.01 and "
                                       "the cliff's spread over the variants)\n"));
  nlohmann::json a = read_json(out / "a" / "tune.json")["answer"];
  CHECK(a["resolution"] == 0.005);
  CHECK(a["cliffs"][0]["safe"] == 0.98);
  CHECK(a["cliffs"][0]["failing"] == 0.985);
  CHECK(a["cliffs"][0]["probes"] == 1);
  CHECK(a["margin"] == 0.01);
  CHECK(a["value"] == 0.97);
  CHECK(a["flag"] == "--gpu-memory-utilization 0.97");
  CHECK(read_json(out / "a" / "tune.json")["simulations"] == 5);

  r = run_headroom("tune " + q(source_dir() / "scenarios" / "quickstart.yaml") +
                   " --knob gpu_memory_utilization --range 0.97:1.0 --points 4 --stress none --resolution 0.0025 "
                   "--margin 0.002 -o " + q(out / "b"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  a = read_json(out / "b" / "tune.json")["answer"];
  CHECK(a["cliffs"][0]["safe"].get<double>() == Approx(0.9825));
  CHECK(a["cliffs"][0]["failing"] == 0.985);
  CHECK(a["cliffs"][0]["probes"] == 2);
  CHECK(a["margin_rule"] == "given (--margin)");
  CHECK(a["value"] == 0.98);  // 0.9825 - 0.002 = 0.9805, down onto the 0.0025 grid
  CHECK(a["flag"] == "--gpu-memory-utilization 0.98");
}

TEST_CASE("compare and tune: bad policies, knobs and ranges are errors with exit code 2") {
  fs::path dir = headroom::test::temp_dir("compare-bad");
  fs::path policies = dir / "p.yaml";
  write(policies, "- engine\n- profiled: {fraction: 1.5}\n");
  auto r = run_headroom("compare " + q(source_dir() / "scenarios" / "quickstart.yaml") + " --policies " + q(policies) +
                        " -o " + q(dir / "out"));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("p.yaml:2:") != std::string::npos);
  CHECK(r.output.find("compare[1].profiled.fraction") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out" / "comparison.json"));

  write(policies, "- engine\n- fragmentaton_buffer\n");
  r = run_headroom("compare " + q(source_dir() / "scenarios" / "quickstart.yaml") + " --policies " + q(policies));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("unknown policy 'fragmentaton_buffer'; did you mean 'fragmentation_buffer'?") != std::string::npos);

  write(policies, "- allocator: \"max_split_size_mb:2\"\n");
  r = run_headroom("compare " + q(source_dir() / "scenarios" / "quickstart.yaml") + " --policies " + q(policies));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("p.yaml:1:") != std::string::npos);

  r = run_headroom("tune " + q(source_dir() / "scenarios" / "quickstart.yaml") +
                   " --knob mem_fraction_static --range 0.8:0.9 -o " + q(dir / "t1"));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("a knob of sglang, and this scenario's engine is vllm") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "t1"));
  r = run_headroom("tune " + q(source_dir() / "scenarios" / "quickstart.yaml") + " --knob gpu_memory_utilisation --range 0.8:0.9");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("did you mean 'gpu_memory_utilization'?") != std::string::npos);
  r = run_headroom("tune " + q(source_dir() / "scenarios" / "quickstart.yaml") + " --knob gpu_memory_utilization --range 0.9-0.95");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--range: '0.9-0.95' is not LO:HI") != std::string::npos);
  r = run_headroom("tune " + q(source_dir() / "scenarios" / "quickstart.yaml") +
                   " --knob gpu_memory_utilization --range 0.8:0.9 --stress rate:fast");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--stress: 'rate:fast' is not a variant") != std::string::npos);
}

TEST_CASE("release_on_oom: a canary taken from the KV cache absorbs one sampler spike") {
  // LightLLM's start-up check samples one request (§3); at mem_fraction 0.955 (what the KV pool, the
  // decode graphs' kept logits and their 46 executables' 276 MiB leave, §1.5) a 619-sequence decode
  // step's native sampler, inside PyTorch's stable sort, asks for the reverse indices (8 B × 619 ×
  // 128,256 = 606 MiB in 2 MiB pieces) and then cub's alternate buffers (910 MiB), where 384 MiB
  // are free and 183 MiB cached. A 1.5 GiB canary (12,288 tokens of KV at 128 KiB) is released at
  // that OOM, the step runs again, and the trace completes. (The spike grew twice: the 304 MiB masked
  // copy took a 512 MiB canary, the sort's scratch a 1 GiB one; with the graphs' executables charged
  // 1 GiB leaves the retry short.)
  fs::path dir = headroom::test::temp_dir("release-on-oom");
  write(dir / "s.yaml",
        "name: spike\ngpu: {profile: h100-sxm-80gb}\nmodel: {name: Llama-3.1-8B}\n"
        "engine: {kind: lightllm, mem_fraction: 0.955}\n"
        "workload:\n  synthetic:\n    requests: 1500\n    arrivals: {process: poisson, rate: 400}\n"
        "    input: {dist: fixed, value: 200}\n    output: {dist: fixed, value: 600}\n"
        "compare: [engine, {release_on_oom: {canary: 1536MiB}}]\n");
  auto r = run_headroom("compare " + q(dir / "s.yaml") + " -o " + q(dir / "out"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json j = read_json(dir / "out" / "comparison.json");
  const auto& engine = j["policies"][0];
  const auto& guard = j["policies"][1];
  CHECK_FALSE(engine["first_oom"].is_null());
  CHECK(guard["first_oom"].is_null());
  REQUIRE(guard["canary_released_s"].is_number());
  // The same spike, a few steps earlier or later (LightLLM admits against the smaller pool; 2.38 s
  // against 2.44 s, decode steps of ~30 ms).
  CHECK(guard["canary_released_s"].get<double>() == Approx(engine["first_oom"]["time_s"].get<double>()).margin(0.1));
  CHECK(engine["first_oom"]["tensor"] == "reverse_indices");
  CHECK(engine["first_oom"]["tried_bytes"] == 303 * 2 * 1024 * 1024);  // 606 MiB
  CHECK(engine["kv_tokens"].get<std::int64_t>() - guard["kv_tokens"].get<std::int64_t>() == 12288);
  CHECK(guard["requests"]["completed"] == 1500);
  // A policy is no LightLLM setting: the flag giving a plain start-up the same KV capacity (issue 16).
  CHECK(engine["engine_setting"].is_null());
  const std::string setting = fmt::format("--max_total_token_num {}", guard["kv_tokens"].get<std::int64_t>());
  CHECK(guard["engine_setting"] == setting);
  CHECK_THAT(r.output, Catch::Contains("  as engine settings (the same KV capacity without the policy):\n"));
  CHECK_THAT(r.output, Catch::Contains(setting + "\n"));
}
