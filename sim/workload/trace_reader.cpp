#include "sim/workload/trace_reader.hpp"

#include <algorithm>

#include "sim/core/text_file.hpp"
#include "sim/core/error.hpp"
#include "sim/workload/field_parse.hpp"

namespace headroom::workload {

namespace {

// The exception bad_row() throws, so that next_row() can tell a malformed row (skippable)
// from other input errors such as an unsorted trace (never skipped).
class BadRow : public InputError {
 public:
  using InputError::InputError;
};

bool blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t'; });
}

}  // namespace

TraceReader::TraceReader(std::unique_ptr<LineReader> lines, TraceFormat format, TraceOptions options,
                         bool timed)
    : lines_(std::move(lines)), format_(format), options_(options), timed_(timed) {}

void TraceReader::bad_row(const std::string& what) const { throw BadRow(lines_->where() + ": " + what); }

Tokens TraceReader::token_field(std::string_view text, std::size_t column, std::string_view name) const {
  Tokens v = 0;
  if (!parse_token_count(text, v)) {
    std::string msg = "column " + std::to_string(column) + " (" + std::string(name) + "): expected a ";
    msg += text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos
               ? "non-negative integer"
               : "token count of at most " + std::to_string(kMaxTokenCount);
    bad_row(msg + ", got '" + printable(text) + "'");
  }
  return v;
}

bool TraceReader::next_row(Request& r, std::int64_t& ns, bool check_order) {
  std::string_view line;
  while (lines_->next(line)) {
    if (blank(line)) continue;
    ++stats_.rows;
    RowTime time;
    r.prefix_hashes.clear();
    r.prefix_block_tokens = 0;
    try {
      parse_row(line, r, time);
    } catch (const BadRow& e) {
      if (!options_.skip_bad_rows) throw InputError(e.what());
      ++stats_.bad_rows;
      if (stats_.bad_row_examples.size() < SourceStats::kMaxExamples) stats_.bad_row_examples.push_back(e.what());
      continue;
    }
    if (check_order && have_first_ && time.ns < prev_ns_) {
      throw InputError(lines_->where() + ": timestamp " + std::string(time.text) +
                       " is earlier than the previous row's " + prev_text_ +
                       " (the trace must be sorted; pass sort to sort it)");
    }
    if (!have_first_ || time.ns < first_ns_) first_ns_ = time.ns;  // the earliest row (the first, when sorted)
    have_first_ = true;
    prev_ns_ = time.ns;
    prev_text_.assign(time.text);
    if (r.input_tokens == 0) {
      ++stats_.zero_input_skipped;
      continue;
    }
    if (r.output_tokens == 0) {
      if (!options_.keep_zero_output) {
        ++stats_.zero_output_skipped;
        continue;
      }
      ++stats_.zero_output_kept;
    }
    ns = time.ns;
    return true;
  }
  // A trace that names no request at all is a truncated or wrong file, not an idle server.
  if (stats_.rows == 0)
    throw InputError(file() + ": no requests: the file has " +
                     (format_ == TraceFormat::mooncake_jsonl ? "only blank lines" : "no rows after its header"));
  return false;
}

void TraceReader::load_sorted() {
  // Sorting needs every row at once: this, and only this, loads the whole file into memory.
  loaded_ = true;
  stats_.loaded_to_sort = true;
  Request r;
  std::int64_t ns = 0;
  while (next_row(r, ns, /*check_order=*/false)) sorted_.push_back({ns, std::move(r)});
  std::stable_sort(sorted_.begin(), sorted_.end(),
                   [](const TimedRequest& a, const TimedRequest& b) { return a.ns < b.ns; });
}

bool TraceReader::next(Request& r) {
  std::int64_t ns = 0;
  if (options_.sort && timed_) {
    if (!loaded_) load_sorted();
    if (sorted_pos_ == sorted_.size()) return false;
    TimedRequest& row = sorted_[sorted_pos_++];
    ns = row.ns;
    std::swap(r.prefix_hashes, row.request.prefix_hashes);
    r.input_tokens = row.request.input_tokens;
    r.output_tokens = row.request.output_tokens;
    r.prefix_block_tokens = row.request.prefix_block_tokens;
  } else if (!next_row(r, ns, /*check_order=*/timed_)) {
    return false;
  }
  r.id = next_id_++;
  r.arrival_s = timed_ ? static_cast<double>(ns - first_ns_) / 1e9 : 0.0;
  ++stats_.emitted;
  return true;
}

SourceStats TraceReader::stats() const { return stats_; }

}  // namespace headroom::workload
