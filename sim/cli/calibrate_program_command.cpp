// headroom calibrate-program SNAPSHOT...: each snapshot recorded by kernels/record_steps.py (one
// forward pass, described by its `<stem>.step.json` sidecar) against the allocation program
// headroom builds for the same model and shape: peak requested bytes, allocation count, the
// multiset of allocation sizes, and the first allocation where the two orders part.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/allocator/snapshot.hpp"
#include "sim/cli/commands.hpp"
#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/model/model_source.hpp"
#include "sim/model/recorded_step.hpp"

namespace headroom::cli {

namespace {

namespace fs = std::filesystem;

struct CalibrateProgramArgs {
  std::vector<std::string> snapshots;
};

std::string signed_bytes(Bytes recorded, Bytes program) {
  if (recorded == program) return "equal";
  const bool more = recorded > program;
  const Bytes d = more ? recorded - program : program - recorded;
  const std::string pct = program > 0 ? fmt::format(" ({}{:.1f} %)", more ? "+" : "-",
                                                    100.0 * static_cast<double>(d) / static_cast<double>(program))
                                      : "";
  return fmt::format("recorded {}{}{}", more ? "+" : "-", format_bytes(d), pct);
}

// kernels/record_steps.py follows vLLM's kernels only where vLLM is installed; without it the
// sidecar's "kernels" starts with "torch" and the step is plain PyTorch (its fp32 RMSNorm
// temporaries and unfused activations are not in vLLM's program).
bool plain_pytorch(const model::RecordedStep& step) { return step.kernels.starts_with("torch"); }

enum class Verdict { matches, plain_pytorch, differs };

Verdict compare_one(const fs::path& snapshot_path) {
  const fs::path sidecar = model::recorded_step_sidecar(snapshot_path);
  const model::RecordedStep step = model::read_recorded_step(sidecar);
  // The model and program the description names; their errors name the description file.
  model::ModelConfig config;
  model::AllocationProgram program;
  int model_layers = 0;
  try {
    config = model::recorded_model(step);
    program = model::recorded_program(step);
    model_layers = model::load_model(step.model).layers;
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", sidecar.string(), e.what()));
  }
  const alloc::Snapshot snapshot = alloc::read_snapshot(snapshot_path);
  const model::ProgramComparison c = model::compare_allocations(
      model::recorded_allocations(snapshot, snapshot_path.string()), model::program_allocations(program));

  const auto& s = step.shape;
  fmt::print("{}: {} ({} of {} layers), tp {}, forward of {} tokens over {} sequences ({} decoding), {}\n",
             snapshot_path.string(), config.name, config.layers, model_layers, s.tp,
             s.tokens, s.seqs, s.decode_seqs, model::attention_backend_name(step.attention));
  if (!step.device.empty() || !step.kernels.empty())
    fmt::print("  recorded on      {}{}{}\n", step.device.empty() ? "?" : step.device,
               step.torch_version.empty() ? "" : ", torch " + step.torch_version,
               step.kernels.empty() ? "" : ", kernels: " + step.kernels);
  fmt::print("  {:<16} {:>14} {:>14}  {}\n", "", "recorded", "program", "difference");
  fmt::print("  {:<16} {:>14} {:>14}  {}\n", "peak requested", format_bytes(c.recorded.peak),
             format_bytes(c.program.peak), signed_bytes(c.recorded.peak, c.program.peak));
  const auto nr = static_cast<std::int64_t>(c.recorded.sizes.size());
  const auto np = static_cast<std::int64_t>(c.program.sizes.size());
  fmt::print("  {:<16} {:>14} {:>14}  {}\n", "allocations", nr, np,
             nr == np ? std::string("equal") : fmt::format("recorded {:+}", nr - np));
  fmt::print("  {:<16} {:>14} {:>14}  {}\n", "left allocated", format_bytes(c.recorded.left_live),
             format_bytes(c.program.left_live), signed_bytes(c.recorded.left_live, c.program.left_live));
  if (c.sizes.empty()) {
    fmt::print("  sizes            the same multiset of {} sizes\n", nr);
  } else {
    fmt::print("  sizes            {} sizes occur a different number of times:\n", c.sizes.size());
    constexpr std::size_t kShown = 12;
    for (std::size_t i = 0; i < c.sizes.size() && i < kShown; ++i) {
      const model::SizeDifference& d = c.sizes[i];
      fmt::print("    {:>14} B ({:>11})  recorded {:>5}, program {:>5}\n", d.bytes, format_bytes(d.bytes), d.recorded,
                 d.program);
    }
    if (c.sizes.size() > kShown) fmt::print("    ... and {} more\n", c.sizes.size() - kShown);
  }
  if (c.first_difference >= 0) {
    const auto i = static_cast<std::size_t>(c.first_difference);
    const std::string rec = i < c.recorded.sizes.size() ? fmt::format("{} B", c.recorded.sizes[i]) : "none (ended)";
    const std::string prog =
        i < c.program.sizes.size() ? fmt::format("{} B, {}", c.program.sizes[i], c.program.names[i]) : "none (ended)";
    fmt::print("  first difference allocation {}: recorded {}; program {}\n", i, rec, prog);
  }
  if (c.matches()) {
    fmt::print("  verdict          the recorded step matches the allocation program\n");
    return Verdict::matches;
  }
  if (plain_pytorch(step)) {
    fmt::print("  verdict          a comparison against plain PyTorch ({}), not vLLM: recorded without vLLM's fused "
               "kernels, whose temporaries the program does not make; record with vLLM installed to compare\n",
               step.kernels);
    return Verdict::plain_pytorch;
  }
  fmt::print("  verdict          the recorded step differs from the allocation program\n");
  return Verdict::differs;
}

void run_calibrate_program(const CalibrateProgramArgs& a) {
  std::size_t matched = 0, plain = 0;
  for (std::size_t i = 0; i < a.snapshots.size(); ++i) {
    if (i > 0) fmt::print("\n");
    const Verdict v = compare_one(a.snapshots[i]);
    matched += v == Verdict::matches ? 1 : 0;
    plain += v == Verdict::plain_pytorch ? 1 : 0;
  }
  if (a.snapshots.size() > 1)
    fmt::print("\n{} of {} recorded steps match their programs{}\n", matched, a.snapshots.size(),
               plain ? fmt::format("; {} recorded with plain PyTorch, not vLLM (not compared with vLLM's program)", plain)
                     : std::string());
}

}  // namespace

void add_calibrate_program_command(CLI::App& app) {
  auto args = std::make_shared<CalibrateProgramArgs>();
  auto* cmd = app.add_subcommand(
      "calibrate-program",
      "Compare forward passes recorded on a GPU (kernels/record_steps.py) with headroom's allocation programs");
  cmd->add_option("snapshots", args->snapshots,
                  "Recorded snapshots; each needs its <stem>.step.json beside it saying which model and shape it holds")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->callback([args] { run_calibrate_program(*args); });
}

}  // namespace headroom::cli
