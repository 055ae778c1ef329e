#pragma once
// Opening a trace file of any supported format, told apart by its first line.
#include <filesystem>
#include <memory>

#include "sim/workload/trace_options.hpp"
#include "sim/workload/trace_reader.hpp"

namespace headroom::workload {

// Throws InputError "PATH: cannot open (...)", "PATH: the file is empty (...)" or
// "PATH:1: unrecognised trace format: ..." (detect_format). A length-only CSV opens too: its
// requests all arrive at 0 (has_arrival_times() is false).
std::unique_ptr<TraceReader> open_trace(const std::filesystem::path& path, const TraceOptions& options = {});

}  // namespace headroom::workload
