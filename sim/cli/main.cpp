// headroom: a discrete-event simulator of GPU memory in LLM serving engines.
// Exit codes: 0 success, 2 bad input (the message names the file, field or flag; also running out of
// memory on an input too large for the machine), 3 a --fail-on condition held (run, compare, tune;
// every output written), 1 internal error.
#include <algorithm>
#include <cstdio>
#include <utility>
#include <exception>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/cli/commands.hpp"
#include "sim/cli/fail_on.hpp"
#include "sim/core/did_you_mean.hpp"
#include "sim/core/error.hpp"
#include "sim/core/out_of_memory.hpp"
#include "sim/core/output_lock.hpp"

int main(int argc, char** argv) {
  std::string command_line = "headroom";  // what an output folder's lock says its holder runs
  for (int i = 1; i < argc; ++i) command_line += std::string(" ") + argv[i];
  headroom::set_lock_command_line(command_line);
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
  headroom::cli::add_import_command(app);
  // CLI11 reads an unknown command as a stray argument and says only "A subcommand is required".
  std::vector<std::string> names;
  for (const CLI::App* sub : std::as_const(app).get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  if (argc > 1 && argv[1][0] != '-' && std::find(names.begin(), names.end(), argv[1]) == names.end()) {
    fmt::print(stderr, "headroom: error: unknown command '{}'{} (commands: {}; see headroom --help)\n", argv[1],
               headroom::did_you_mean_suffix(argv[1], names), fmt::join(names, ", "));
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const headroom::InputError& e) {
    fmt::print(stderr, "headroom: error: {}\n", e.what());
    return 2;
  } catch (const headroom::cli::ConditionHeld& e) {
    fmt::print(stderr, "headroom: {}\n", e.what());
    return headroom::cli::kExitConditionHeld;
  } catch (const std::bad_alloc&) {  // a step that names itself throws OutOfMemory (an InputError) instead
    std::string command = "headroom";
    for (const CLI::App* sub : app.get_subcommands()) command += " " + sub->get_name();
    fmt::print(stderr, "headroom: error: {}\n", headroom::OutOfMemory(fmt::format("running '{}'", command)).what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "headroom: internal error: {}\n", e.what());
    return 1;
  }
  return 0;
}
