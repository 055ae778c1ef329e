#include "sim/engine/deployment.hpp"

#include <fmt/format.h>

#include "sim/model/tensor_parallel.hpp"

namespace headroom::engine {

void validate_deployment(const Deployment& d) {
  if (d.tp < 1) throw InputError(fmt::format("deployment tp: expected at least 1, got {}", d.tp));
  model::tensor_parallel_shard(d.model, d.tp);  // throws InputError when the TP size does not fit
  if (d.total() == 0) throw InputError("deployment visible: expected a capacity above 0 bytes");
}

}  // namespace headroom::engine
