// headroom: a discrete-event simulator of GPU memory in LLM serving engines.
// Exit codes: 0 success, 2 bad input (the message names the file, field or flag), 1 internal error.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "sim/cli/commands.hpp"
#include "sim/core/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"headroom: GPU memory of LLM serving engines, simulated to the byte"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "headroom 0.1.0");
  headroom::cli::add_run_command(app);
  headroom::cli::add_compare_command(app);
  headroom::cli::add_tune_command(app);
  headroom::cli::add_sweep_command(app);
  headroom::cli::add_replay_command(app);
  headroom::cli::add_sample_snapshot_command(app);
  headroom::cli::add_model_command(app);
  headroom::cli::add_fit_command(app);
  headroom::cli::add_calibrate_program_command(app);
  headroom::cli::add_report_command(app);
  headroom::cli::add_generate_trace_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const headroom::InputError& e) {
    fmt::print(stderr, "headroom: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "headroom: internal error: {}\n", e.what());
    return 1;
  }
  return 0;
}
