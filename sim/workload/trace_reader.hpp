#pragma once
// What every trace-file reader shares: streaming rows through a LineReader, rebasing times to
// the first row, the sortedness check (or sorting on request), skipping malformed rows when
// asked, the zero-length rule, and the statistics. A format only says how to parse one row.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/workload/line_reader.hpp"
#include "sim/workload/request_source.hpp"
#include "sim/workload/trace_format.hpp"
#include "sim/workload/trace_options.hpp"

namespace headroom::workload {

class TraceReader : public RequestSource {
 public:
  bool next(Request& r) final;
  SourceStats stats() const override;

  TraceFormat format() const { return format_; }
  // False for a length-only file: its requests all have arrival_s 0.
  bool has_arrival_times() const { return timed_; }
  const std::string& file() const { return lines_->name(); }

 protected:
  // `lines` is positioned at the first data row.
  TraceReader(std::unique_ptr<LineReader> lines, TraceFormat format, TraceOptions options, bool timed);

  struct RowTime {
    std::int64_t ns = 0;     // any fixed origin; only differences matter
    std::string_view text;   // as written in the file, for messages
  };
  // Parses one non-blank data line into r.input_tokens, r.output_tokens, r.prefix_hashes and
  // r.prefix_block_tokens, and its time (left alone by readers of untimed formats). Reports
  // anything malformed through bad_row().
  virtual void parse_row(std::string_view line, Request& r, RowTime& time) = 0;

  // Throws the InputError "FILE:LINE: <what>" for the current row; skipped and counted instead
  // when skip_bad_rows is set.
  [[noreturn]] void bad_row(const std::string& what) const;
  // A token count in `column` (1-based) called `name`, or bad_row(
  // "column N (NAME): expected a non-negative integer, got 'TEXT'").
  Tokens token_field(std::string_view text, std::size_t column, std::string_view name) const;

 private:
  // The next row that parses, is in order and passes the zero-length rule; its time in `ns`.
  bool next_row(Request& r, std::int64_t& ns, bool check_order);
  void load_sorted();

  std::unique_ptr<LineReader> lines_;
  TraceFormat format_;
  TraceOptions options_;
  bool timed_;
  SourceStats stats_;

  bool have_first_ = false;
  std::int64_t first_ns_ = 0;
  std::int64_t prev_ns_ = 0;
  std::string prev_text_;
  std::uint64_t next_id_ = 0;

  // Only with options.sort: every row, loaded at the first next().
  struct TimedRequest {
    std::int64_t ns;
    Request request;
  };
  bool loaded_ = false;
  std::vector<TimedRequest> sorted_;
  std::size_t sorted_pos_ = 0;
};

}  // namespace headroom::workload
