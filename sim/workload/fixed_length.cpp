#include "sim/workload/fixed_length.hpp"

#include <string>

#include "sim/core/error.hpp"
#include "sim/workload/field_parse.hpp"

namespace headroom::workload {

FixedLength::FixedLength(Tokens value) : value_(value) {
  if (value < 1 || value > kMaxTokenCount)
    throw InputError("fixed length: value must be between 1 and " + std::to_string(kMaxTokenCount) +
                     " tokens, got " + std::to_string(value));
}

}  // namespace headroom::workload
