// Policy parameters as data (sim/policy/policy_parameters.hpp): the one table per policy drives
// describe(), make_policy's checks, the YAML reader and writer and tune's knobs. The strings here
// are the ones each policy gave before the tables (issue 15), so a table edit that changes a
// label, an error or a written scenario fails here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include <yaml-cpp/yaml.h>

#include "sim/core/error.hpp"
#include "sim/policy/policy_parameters.hpp"
#include "sim/scenario/policy_yaml.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/tune.hpp"

using namespace headroom;
using policy::PolicyKind;
using policy::PolicySpec;

namespace {

PolicySpec spec_of(PolicyKind kind) {
  PolicySpec s;
  s.kind = kind;
  return s;
}

std::string emitted(const PolicySpec& s) {
  YAML::Emitter e;
  e << YAML::Flow;
  scenario::emit_policy(e, s);
  return e.c_str();
}

PolicySpec read_back(const std::string& entry) {
  const YAML::Node root = YAML::Load("compare: [" + entry + "]");
  const std::vector<PolicySpec> v = scenario::read_policies(YamlSection(root, "p.yaml", ""), "compare");
  REQUIRE(v.size() == 1);
  return v.front();
}

}  // namespace

TEST_CASE("policy parameters: describe() of every policy with its defaults") {
  CHECK(policy::describe(spec_of(PolicyKind::engine)) == "engine");
  CHECK(policy::describe(spec_of(PolicyKind::static_fraction)) == "static_fraction(fraction=engine's)");
  CHECK(policy::describe(spec_of(PolicyKind::profiled)) == "profiled(fraction=engine's)");
  CHECK(policy::describe(spec_of(PolicyKind::fragmentation_buffer)) ==
        "fragmentation_buffer(fraction=engine's, k=2, floor=150.00 MiB)");
  CHECK(policy::describe(spec_of(PolicyKind::auto_profile)) ==
        "auto_profile(mem_fraction=0.95, canary=256.00 MiB, shrink=0.05, max_retries=3)");
  CHECK(policy::describe(spec_of(PolicyKind::workspace_aware)) == "workspace_aware(fraction=engine's)");
  CHECK(policy::describe(spec_of(PolicyKind::workspace_cap)) == "workspace_cap");
  CHECK(policy::describe(spec_of(PolicyKind::shared_decode_buffer)) == "shared_decode_buffer");
  CHECK(policy::describe(spec_of(PolicyKind::release_on_oom)) == "release_on_oom(canary=256.00 MiB)");
  PolicySpec a = spec_of(PolicyKind::allocator);
  a.alloc_conf = "expandable_segments:True";
  CHECK(policy::describe(a) == "allocator(expandable_segments:True)");
  // margin only when not zero, cudagraph_estimate by its name when true; the label never.
  PolicySpec p = spec_of(PolicyKind::profiled);
  p.label = "mine";
  p.fraction = 0.9;
  CHECK(policy::describe(p) == "profiled(fraction=0.9)");
  p.margin = 150 * MiB;
  p.cudagraph_estimate = true;
  CHECK(policy::describe(p) == "profiled(fraction=0.9, margin=150.00 MiB, cudagraph_estimate)");
  // fragmentation_buffer reads margin and the graph estimate but does not show them.
  PolicySpec f = spec_of(PolicyKind::fragmentation_buffer);
  f.margin = MiB;
  f.cudagraph_estimate = true;
  f.k = 1.5;
  CHECK(policy::describe(f) == "fragmentation_buffer(fraction=engine's, k=1.5, floor=150.00 MiB)");
}

TEST_CASE("policy parameters: make_policy checks every ranged parameter, whichever policy reads it") {
  PolicySpec s = spec_of(PolicyKind::static_fraction);
  s.fraction = 1.5;
  CHECK_THROWS_WITH(policy::make_policy(s), "static_fraction(fraction=1.5): fraction must be in (0, 1], got 1.5");
  PolicySpec f = spec_of(PolicyKind::fragmentation_buffer);
  f.k = -1;
  CHECK_THROWS_WITH(policy::make_policy(f),
                    "fragmentation_buffer(fraction=engine's, k=-1, floor=150.00 MiB): k must be at least 0, got -1");
  PolicySpec a = spec_of(PolicyKind::auto_profile);
  a.shrink = 1;
  CHECK_THROWS_WITH(policy::make_policy(a),
                    "auto_profile(mem_fraction=0.95, canary=256.00 MiB, shrink=1, max_retries=3): shrink must be in "
                    "(0, 1), got 1");
  a.shrink = 0.05;
  a.max_retries = 101;
  CHECK_THROWS_WITH(policy::make_policy(a),
                    "auto_profile(mem_fraction=0.95, canary=256.00 MiB, shrink=0.05, max_retries=101): max_retries must "
                    "be in [0, 100], got 101");
  a.max_retries = 3;
  a.mem_fraction = 0;
  CHECK_THROWS_WITH(policy::make_policy(a),
                    "auto_profile(mem_fraction=0, canary=256.00 MiB, shrink=0.05, max_retries=3): mem_fraction must "
                    "be in (0, 1], got 0");
  // A parameter the policy does not read is still checked (as before the tables).
  PolicySpec e = spec_of(PolicyKind::engine);
  e.k = -2;
  CHECK_THROWS_WITH(policy::make_policy(e), "engine: k must be at least 0, got -2");
  for (const PolicySpec& d : scenario::default_policies()) CHECK_NOTHROW(policy::make_policy(d));
}

TEST_CASE("policy parameters: the YAML writer writes each policy's parameters in its table's order, and they read back") {
  CHECK(emitted(spec_of(PolicyKind::engine)) == "{engine: {}}");
  CHECK(emitted(spec_of(PolicyKind::profiled)) == "{profiled: {margin: 0, cudagraph_estimate: false}}");
  CHECK(emitted(spec_of(PolicyKind::fragmentation_buffer)) ==
        "{fragmentation_buffer: {margin: 0, cudagraph_estimate: false, k: 2, floor: 157286400}}");
  CHECK(emitted(spec_of(PolicyKind::auto_profile)) ==
        "{auto_profile: {mem_fraction: 0.94999999999999996, canary: 268435456, shrink: 0.050000000000000003, max_retries: 3, "
        "min_probe_tokens: 8192}}");  // yaml-cpp writes a double with 17 significant digits
  PolicySpec full = spec_of(PolicyKind::fragmentation_buffer);
  full.label = "fb";
  full.fraction = 0.85;
  full.margin = 3 * MiB;
  full.cudagraph_estimate = true;
  full.k = 2.5;
  full.floor = 64 * MiB;
  CHECK(emitted(full) ==
        "{fragmentation_buffer: {label: fb, fraction: 0.84999999999999998, margin: 3145728, cudagraph_estimate: true, "
        "k: 2.5, floor: 67108864}}");
  std::vector<PolicySpec> all = scenario::default_policies();
  all.push_back(full);
  PolicySpec ap = spec_of(PolicyKind::auto_profile);
  ap.mem_fraction = 0.8;
  ap.canary = 128 * MiB;
  ap.shrink = 0.1;
  ap.max_retries = 5;
  ap.min_probe_tokens = 4096;
  all.push_back(ap);
  for (const PolicySpec& s : all) {
    INFO(emitted(s));
    const PolicySpec back = read_back(emitted(s));
    CHECK(back.kind == s.kind);
    CHECK(back.label == s.label);
    CHECK(back.fraction == s.fraction);
    CHECK(policy::describe(back) == policy::describe(s));
    CHECK(emitted(back) == emitted(s));
    CHECK(back.min_probe_tokens == s.min_probe_tokens);
  }
}

TEST_CASE("policy parameters: each table lists label first and the rest in the catalogue's order") {
  const std::vector<policy::PolicyParameter>& all = policy::policy_parameters();
  auto index = [&](const policy::PolicyParameter* p) { return p - all.data(); };
  for (std::string_view name : policy::policy_kind_names()) {
    INFO(name);
    const auto& table = policy::policy_table(*policy::parse_policy_kind(name));
    REQUIRE_FALSE(table.empty());
    CHECK(table.front().parameter->name == "label");
    for (std::size_t i = 1; i < table.size(); ++i) CHECK(index(table[i - 1].parameter) < index(table[i].parameter));
  }
}

TEST_CASE("policy parameters: tune's policy knobs are the tunable parameters, and each applies to the policies that read it") {
  std::vector<std::string> policy_knobs;
  for (const std::string& k : scenario::knob_names())
    if (k.rfind("policy.", 0) == 0) policy_knobs.push_back(k);
  CHECK(policy_knobs == std::vector<std::string>{"policy.fraction", "policy.mem_fraction", "policy.k",
                                                 "policy.margin_mib", "policy.floor_mib", "policy.canary_mib"});
  scenario::Scenario sc = scenario::parse_scenario(
      "name: knobs\ngpu: {profile: h100-sxm-80gb}\nmodel: {name: Llama-3.1-8B}\nengine: {kind: vllm}\n"
      "policy: {fragmentation_buffer: {k: 2}}\n"
      "workload: {synthetic: {requests: 10, arrivals: {process: poisson, rate: 1}, input: {dist: fixed, value: 100}, "
      "output: {dist: fixed, value: 10}}}\n",
      "knobs.yaml", "/tmp");
  scenario::set_knob(sc, "policy.floor_mib", 10);
  CHECK(sc.policy.floor == 10 * MiB);
  scenario::set_knob(sc, "policy.k", 3);
  CHECK(sc.policy.k == 3);
  scenario::set_knob(sc, "policy.fraction", 0.8);
  CHECK(sc.policy.fraction == 0.8);
  CHECK(scenario::knob_info(sc, "policy.k").higher_is_aggressive == false);
  CHECK(scenario::knob_info(sc, "policy.fraction").higher_is_aggressive == true);
  CHECK(scenario::knob_info(sc, "policy.margin_mib").unit == "MiB");
  CHECK_THROWS_WITH(scenario::set_knob(sc, "policy.canary_mib", 1),
                    "--knob policy.canary_mib: a parameter of the policy auto_profile or release_on_oom, and this "
                    "scenario's policy is fragmentation_buffer (set the scenario's policy: key)");
  CHECK_THROWS_WITH(scenario::set_knob(sc, "policy.k", -1), "--knob policy.k: -1 is negative");
  CHECK_THROWS_WITH(scenario::set_knob(sc, "policy.floor_mib", -1), "--knob policy.floor_mib: -1 MiB is negative");
  CHECK_THROWS_WITH(scenario::set_knob(sc, "policy.fraction", 1.5), "--knob policy.fraction: 1.5 is not a fraction in (0, 1]");
}
