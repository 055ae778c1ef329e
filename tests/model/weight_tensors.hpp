// A rank's weight tensors by name, for the weight and sharding tests.
#pragma once

#include <map>
#include <string>

#include "sim/model/weights.hpp"

namespace headroom::test {

inline std::map<std::string, model::WeightTensor> tensors_by_name(const model::WeightList& w) {
  std::map<std::string, model::WeightTensor> m;
  for (const auto& t : w.tensors) m.emplace(t.name, t);
  return m;
}

}  // namespace headroom::test
