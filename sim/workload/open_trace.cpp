#include "sim/workload/open_trace.hpp"

#include "sim/core/error.hpp"
#include "sim/workload/azure_csv.hpp"
#include "sim/workload/seconds_csv.hpp"
#include "sim/workload/length_csv.hpp"
#include "sim/workload/mooncake_jsonl.hpp"

namespace headroom::workload {

std::unique_ptr<TraceReader> open_trace(const std::filesystem::path& path, const TraceOptions& options) {
  auto lines = std::make_unique<LineReader>(path);
  std::string_view first;
  if (!lines->next(first))
    throw InputError(lines->name() + ": the file is empty (expected a CSV header or a JSON object per line)");
  const TraceFormat format = detect_format(first, lines->name());
  switch (format) {
    case TraceFormat::mooncake_jsonl:
      lines->unread();  // the first line is already a request
      return std::make_unique<MooncakeJsonlReader>(std::move(lines), options);
    case TraceFormat::azure_csv: {
      const std::string header(first);
      return std::make_unique<AzureCsvReader>(std::move(lines), header, options);
    }
    case TraceFormat::vidur_csv: {
      const std::string header(first);
      return std::make_unique<SecondsCsvReader>(std::move(lines), header, TraceFormat::vidur_csv, kVidurColumns,
                                                options);
    }
    case TraceFormat::burstgpt_csv: {
      const std::string header(first);
      return std::make_unique<SecondsCsvReader>(std::move(lines), header, TraceFormat::burstgpt_csv,
                                                kBurstGptColumns, options);
    }
    case TraceFormat::length_csv: {
      const std::string header(first);
      return std::make_unique<LengthCsvReader>(std::move(lines), header, options);
    }
  }
  throw InputError(lines->name() + ": unsupported trace format");
}

}  // namespace headroom::workload
