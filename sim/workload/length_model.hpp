#pragma once
// Where a synthetic request's lengths come from: two independent distributions, or the rows of
// a file (which keeps each row's input and output together).
#include "sim/core/rng.hpp"
#include "sim/workload/request_source.hpp"

namespace headroom::workload {

class LengthModel {
 public:
  virtual ~LengthModel() = default;
  // Sets r.input_tokens, r.output_tokens and the prefix hashes. False when the model has run
  // out (a file read in order, at its end).
  virtual bool sample(Rng& rng, Request& r) = 0;
  // True when sample() can return false, so a source needs no other limit to end.
  virtual bool finite() const { return false; }
  // What reading a file took (rows, skipped rows); empty for distributions.
  virtual SourceStats stats() const { return {}; }
};

}  // namespace headroom::workload
