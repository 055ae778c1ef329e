// headroom import [-o FILE] [--workload FILE] [--gpu PROFILE] -- <engine command line>: the server's
// command line as a complete scenario (docs/import.md), on stdout or in FILE; what was ignored or
// taken from the quickstart goes to stderr. Nothing is written when anything is wrong.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/cli/commands.hpp"
#include "sim/cli/import_words.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "sim/scenario/import_scenario.hpp"

namespace headroom::cli {

namespace {

struct ImportArgs {
  std::vector<std::string> command;  // the words CLI11 takes as positionals (all of them after `--`)
  std::string output;
  std::string workload;
  std::string gpu;
};

void import_command(const ImportArgs& a, const std::vector<std::string>& rest) {
  scenario::ImportInputs in;
  in.what = "engine command line";
  in.words = command_line_words(rest, in.what);
  if (!a.workload.empty()) in.workload = a.workload;
  if (!a.gpu.empty()) in.gpu = a.gpu;
  const scenario::ImportedScenario imported = scenario::import_scenario(in);
  if (a.output.empty()) {
    std::fwrite(imported.yaml.data(), 1, imported.yaml.size(), stdout);
  } else {
    write_file_atomically(a.output, [&](std::ostream& os) { os << imported.yaml; });
    fmt::print(stderr, "headroom import: wrote {}\n", a.output);
  }
  for (const std::string& n : imported.notes) fmt::print(stderr, "headroom import: {}\n", n);
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto args = std::make_shared<ImportArgs>();
  auto* cmd = app.add_subcommand(
      "import", "A server's command line (vllm serve, python -m sglang.launch_server, python -m "
                "lightllm.server.api_server) as a scenario: headroom import [-o FILE] -- <command line>");
  cmd->add_option("-o,--output", args->output, "Write the scenario to FILE (default: stdout)");
  cmd->add_option("--workload", args->workload,
                  "The workload: a scenario or workload YAML, or a trace file (default: the quickstart's synthetic workload)");
  cmd->add_option("--gpu", args->gpu, "GPU profile: a built-in name or a profile YAML (default: the quickstart's h100-sxm-80gb)");
  // The server's command line: after `--` CLI11 takes every word as a positional, in order (and
  // leaves the `--` itself unparsed). Without `--` it would read the line's flags as its own.
  cmd->add_option("command", args->command, "The server's command line, after -- (or quoted as one argument)");
  cmd->prefix_command();
  cmd->callback([args, cmd] {
    const std::vector<std::string> rest = cmd->remaining();
    if (!rest.empty() && std::find(rest.begin(), rest.end(), "--") == rest.end())
      throw InputError(fmt::format("engine command line: put -- before it (headroom import [-o FILE] -- {} ...) or "
                                   "quote it as one argument; without -- its flags read as headroom's",
                                   args->command.empty() ? std::string("vllm serve MODEL") : args->command.front()));
    import_command(*args, args->command);
  });
}

}  // namespace headroom::cli
