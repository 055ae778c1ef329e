#pragma once
// Lengths taken from the rows of a file: a length-only CSV (ShareGPT, arxiv, bwb) or any trace
// (its arrival times are ignored). Each row's input, output and prefix hashes stay together.
//  - sequential: the rows in file order, streamed; the model runs out at the end of the file.
//  - sample: rows drawn uniformly with replacement. Drawing at random needs every row, so this
//    order (only this one) loads the file: two counts and the prefix hashes per row.
#include <filesystem>
#include <memory>
#include <vector>

#include "sim/workload/length_model.hpp"
#include "sim/workload/trace_options.hpp"
#include "sim/workload/trace_reader.hpp"

namespace headroom::workload {

enum class LengthOrder { sequential, sample };

class FileLengths final : public LengthModel {
 public:
  // Throws what open_trace throws, and InputError "PATH: no usable rows" when the file gives
  // no request.
  FileLengths(const std::filesystem::path& path, LengthOrder order, const TraceOptions& options = {});
  bool sample(Rng& rng, Request& r) override;
  bool finite() const override { return order_ == LengthOrder::sequential; }
  SourceStats stats() const override { return reader_->stats(); }

 private:
  struct Row {
    Tokens input, output, block_tokens;
    std::vector<std::uint64_t> hashes;
  };
  LengthOrder order_;
  std::unique_ptr<TraceReader> reader_;
  std::vector<Row> rows_;  // sample order only
};

}  // namespace headroom::workload
