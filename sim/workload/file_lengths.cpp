#include "sim/workload/file_lengths.hpp"

#include "sim/core/error.hpp"
#include "sim/workload/open_trace.hpp"

namespace headroom::workload {

FileLengths::FileLengths(const std::filesystem::path& path, LengthOrder order, const TraceOptions& options)
    : order_(order), reader_(open_trace(path, options)) {
  if (order_ != LengthOrder::sample) return;
  Request r;
  while (reader_->next(r)) rows_.push_back({r.input_tokens, r.output_tokens, r.prefix_block_tokens, r.prefix_hashes});
  if (rows_.empty()) throw InputError(reader_->file() + ": no usable rows");
}

bool FileLengths::sample(Rng& rng, Request& r) {
  if (order_ == LengthOrder::sequential) return reader_->next(r);
  const Row& row = rows_[rng.uniform_int(0, rows_.size() - 1)];
  r.input_tokens = row.input;
  r.output_tokens = row.output;
  r.prefix_block_tokens = row.block_tokens;
  r.prefix_hashes.assign(row.hashes.begin(), row.hashes.end());
  return true;
}

}  // namespace headroom::workload
