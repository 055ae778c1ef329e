// headroom sample-snapshot -o FILE: writes the project's own sample allocator history.
#include <string>

#include <fmt/format.h>

#include "sim/allocator/sample_history.hpp"
#include "sim/allocator/snapshot.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/whole_number.hpp"

namespace headroom::cli {

void add_sample_snapshot_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("sample-snapshot",
                                 "Write a sample allocator history made by the model itself (.pickle or .json)");
  auto out = std::make_shared<std::string>();
  auto opts = std::make_shared<alloc::SampleHistoryOptions>();
  cmd->add_option("-o,--output", *out, "Output file; .json writes JSON, anything else a PyTorch-style pickle")
      ->required();
  cmd->add_option_function<std::string>(
      "--seed", [opts](const std::string& s) { opts->seed = whole_number(s, "--seed", 0, UINT64_MAX); },
      "Seed of the ragged batch sizes (default 1)");
  cmd->add_option("--steps", opts->steps, "Training-like steps to record")->capture_default_str()->check(CLI::Range(1, 10000));
  cmd->callback([out, opts] {
    alloc::Snapshot snap = alloc::make_sample_history(*opts);
    if (out->size() >= 5 && out->substr(out->size() - 5) == ".json") {
      alloc::write_snapshot_json(snap, *out);
    } else {
      alloc::write_snapshot_pickle(snap, *out);
    }
    std::size_t events = snap.device_traces.empty() ? 0 : snap.device_traces[0].size();
    fmt::print("wrote {} ({} segments, {} trace entries)\n", *out, snap.segments.size(), events);
  });
}

}  // namespace headroom::cli
