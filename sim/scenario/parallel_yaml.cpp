#include "sim/scenario/parallel_yaml.hpp"

#include <fmt/format.h>

#include "sim/model/model_limits.hpp"

namespace headroom::scenario {

namespace {

enum class ParallelKeyType { whole, boolean, bytes };

struct ParallelKey {
  std::string_view name;
  ParallelKeyType type;
  std::int64_t lo = 0, hi = 0;  // whole numbers
  int engine::Parallelism::*whole = nullptr;
  bool engine::Parallelism::*flag = nullptr;
  Bytes engine::Parallelism::*bytes = nullptr;
};

// NCCL src/include/device.h MAXCHANNELS is 32 (64 from NCCL 2.19); a ring has at most 2 peers per
// channel, a tree up to 4 (one parent, three children).
constexpr ParallelKey kParallelKeys[] = {
    {"pp", ParallelKeyType::whole, 1, model::limits::kMaxTensorParallel, &engine::Parallelism::pp, nullptr, nullptr},
    {"dp", ParallelKeyType::whole, 1, model::limits::kMaxTensorParallel, &engine::Parallelism::dp, nullptr, nullptr},
    {"ep", ParallelKeyType::whole, 1, model::limits::kMaxTensorParallel, &engine::Parallelism::ep, nullptr, nullptr},
    {"dp_attention", ParallelKeyType::boolean, 0, 0, nullptr, &engine::Parallelism::dp_attention, nullptr},
    {"custom_all_reduce", ParallelKeyType::boolean, 0, 0, nullptr, &engine::Parallelism::custom_all_reduce, nullptr},
    {"nccl_buffsize", ParallelKeyType::bytes, 0, 0, nullptr, nullptr, &engine::Parallelism::nccl_buffsize},
    {"nccl_channels", ParallelKeyType::whole, 1, 64, &engine::Parallelism::nccl_channels, nullptr, nullptr},
    {"nccl_peers", ParallelKeyType::whole, 1, 4, &engine::Parallelism::nccl_peers, nullptr, nullptr},
};

}  // namespace

engine::Parallelism read_parallel(const YamlSection& section, std::map<std::string, std::string>& places) {
  std::vector<std::string> names;
  for (const ParallelKey& k : kParallelKeys) names.emplace_back(k.name);
  section.check_keys(names);
  engine::Parallelism p;
  for (const ParallelKey& k : kParallelKeys) {
    if (!section.present(k.name)) continue;
    places[fmt::format("parallel.{}", k.name)] =
        fmt::format("{}: key '{}'", section.where(section.value(k.name)), section.key_path(k.name));
    switch (k.type) {
      case ParallelKeyType::whole:
        p.*k.whole = static_cast<int>(section.integer(k.name, section.value(k.name), k.lo, k.hi));
        break;
      case ParallelKeyType::boolean: section.optional_bool(k.name, p.*k.flag); break;
      case ParallelKeyType::bytes: p.*k.bytes = section.bytes(k.name); break;
    }
  }
  return p;
}

void emit_parallel(YAML::Emitter& e, const engine::Parallelism& p) {
  e << YAML::BeginMap;
  for (const ParallelKey& k : kParallelKeys) {
    e << YAML::Key << std::string(k.name) << YAML::Value;
    switch (k.type) {
      case ParallelKeyType::whole: e << p.*k.whole; break;
      case ParallelKeyType::boolean: e << (p.*k.flag); break;
      case ParallelKeyType::bytes: e << p.*k.bytes; break;
    }
  }
  e << YAML::EndMap;
}

}  // namespace headroom::scenario
