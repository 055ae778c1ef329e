#pragma once
// Each `headroom` subcommand registers itself on the app; its callback does the work.
#include <CLI/CLI.hpp>

namespace headroom::cli {

void add_replay_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_sample_snapshot_command(CLI::App& app);
void add_model_command(CLI::App& app);
void add_fit_command(CLI::App& app);
void add_calibrate_program_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_generate_trace_command(CLI::App& app);
void add_import_command(CLI::App& app);

}  // namespace headroom::cli
