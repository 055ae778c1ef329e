// headroom sweep GRID.yaml: every point of a grid of scenarios (knobs × traces × models × GPUs ×
// policies) on every local core, or as MPI ranks across machines (`mpirun -n N headroom sweep ...`
// in an MPI build). Resumable: finished points are kept in <out>/points/ and skipped on restart.
// Rank 0 writes results.csv and results.json, every point in grid order.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/cli/commands.hpp"
#include "sim/cli/output_folder.hpp"
#include "sim/core/progress.hpp"
#include "sim/cli/ranks.hpp"
#include "sim/cli/whole_number.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "sim/core/out_of_memory.hpp"
#include "sim/core/input_file.hpp"
#include "sim/scenario/sweep.hpp"

namespace headroom::cli {

namespace {

struct SweepArgs {
  std::string grid;
  std::string out_dir;
  unsigned threads = 0;
  std::size_t max_points = 0;  // 0: no limit
  bool collect = false;
  bool check = false;
};

namespace fs = std::filesystem;

// Every finished point file this rank can read (all ranks' on a shared folder), as "id\ntext".
std::vector<std::string> local_point_files(const scenario::SweepGrid& grid, const fs::path& out) {
  std::vector<std::string> items;
  for (const scenario::SweepPoint& p : grid.points) {
    std::error_code ec;
    const fs::path f = scenario::sweep_point_file(out, p);
    if (!fs::exists(f, ec)) continue;
    refuse_special_file(f, "sweep point's result");
    std::ifstream in(f, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    items.push_back(p.id + "\n" + buf.str());
  }
  return items;
}

// Rank 0 writes the point files other ranks sent that its own folder lacks or holds stale (ranks on
// machines without a shared folder); a sent file itself stale (from the files before a change) is
// dropped, and its point runs again.
std::size_t store_gathered(const scenario::SweepGrid& grid, const fs::path& out, const std::vector<std::string>& items) {
  std::size_t stored = 0;
  fs::create_directories(out / "points");
  for (const std::string& item : items) {
    const std::size_t nl = item.find('\n');
    const std::string id = item.substr(0, nl);
    auto it = std::find_if(grid.points.begin(), grid.points.end(), [&](const auto& p) { return p.id == id; });
    if (it == grid.points.end()) continue;
    const std::string text = item.substr(nl + 1);
    if (!scenario::sweep_point_current(nlohmann::json::parse(text, nullptr, false), *it)) continue;
    const fs::path f = scenario::sweep_point_file(out, *it);
    std::error_code ec;
    if (fs::exists(f, ec) && scenario::sweep_point_current(scenario::read_sweep_point(out, *it), *it)) continue;
    write_file_atomically(f, [&](std::ostream& o) { o << text; });
    ++stored;
  }
  return stored;
}

void print_table(const scenario::SweepGrid& grid, const fs::path& out) {
  constexpr std::size_t kShown = 40;
  for (const scenario::SweepPoint& p : grid.points) {
    if (p.index == kShown) {
      fmt::print("  ... {} more in results.csv\n", grid.points.size() - kShown);
      break;
    }
    const nlohmann::json j = scenario::read_sweep_point(out, p);
    std::string coords;
    for (const auto& [axis, value] : p.coordinates) coords += fmt::format("{}{}={}", coords.empty() ? "" : " ", axis, value);
    const nlohmann::json& r = j["result"];
    fmt::print("  {:>4} {}  {}: {} KV tokens, {}\n", p.index, p.id, coords, r["kv_tokens"].get<std::int64_t>(),
               r["verdict"].get<std::string>());
  }
}

void sweep(const SweepArgs& a, const Ranks& ranks) {
  const scenario::SweepGrid grid = scenario::load_sweep_grid(a.grid);  // every point validated here
  const fs::path out = a.out_dir.empty() ? scenario::default_output_folder(grid.name, grid.name_at, grid.file)
                                        : fs::path(a.out_dir);
  create_output_folder(out / "points");
  const bool root = ranks.rank() == 0;
  // Rank 0 holds the folder for the whole sweep; other ranks write into it only after rank 0 has
  // taken it (they wait for its broadcast), or into their own machine's folder.
  std::unique_ptr<OutputFolderLock> lock;
  if (root) lock = lock_output_folder(out);
  if (a.collect) {
    if (root) {
      scenario::write_sweep_results(grid, out);
      fmt::print("sweep {}: {} points collected into {}/results.csv and results.json\n", grid.name, grid.points.size(),
                 out.string());
    }
    return;
  }

  // Rank 0 gets every finished point any rank holds, then decides what is left and tells everyone.
  if (ranks.size() > 1) store_gathered(grid, out, ranks.gather(root ? std::vector<std::string>{} : local_point_files(grid, out)));
  std::vector<std::size_t> pending;
  std::size_t resumed = 0, remaining_after = 0, changed = 0;
  if (root) {
    pending = scenario::pending_sweep_points(grid, out, &changed);
    resumed = grid.points.size() - pending.size();
    if (a.max_points > 0 && pending.size() > a.max_points) {
      remaining_after = pending.size() - a.max_points;
      pending.resize(a.max_points);
    }
  }
  pending = ranks.broadcast(pending);
  std::vector<std::size_t> mine;
  for (std::size_t k = 0; k < pending.size(); ++k)
    if (k % static_cast<std::size_t>(ranks.size()) == static_cast<std::size_t>(ranks.rank())) mine.push_back(pending[k]);

  // Threads: -j, or this machine's cores shared by its ranks.
  const unsigned threads =
      a.threads > 0 ? a.threads : std::max(1u, std::thread::hardware_concurrency() / static_cast<unsigned>(ranks.local_size()));
  std::vector<std::string> finished;
  {
    // Rank 0's points on the terminal (the other ranks' stderr is not the user's); cleared before any output.
    Progress progress(std::cerr, root && ::isatty(STDERR_FILENO) == 1, "sweep (rank 0)", mine.size());
    scenario::run_sweep_points(grid, mine, out, threads, a.check, [&](const scenario::SweepPoint& p, const nlohmann::json& j) {
      if (ranks.size() > 1) finished.push_back(p.id + "\n" + j.dump(2) + "\n");
      progress.point_done();
    });
  }
  if (ranks.size() > 1) store_gathered(grid, out, ranks.gather(root ? std::vector<std::string>{} : finished));
  if (!root) return;

  fmt::print("sweep {}: {} points ({}), {} resumed, {} run on {} rank{} × {} thread{}\n", grid.name, grid.points.size(),
             fmt::join(grid.axes, " × "), resumed, pending.size(), ranks.size(), ranks.size() == 1 ? "" : "s", threads,
             threads == 1 ? "" : "s");
  if (changed > 0)
    fmt::print("  {} earlier result{} not resumed: files {} read (trace, lengths file, config.json or GPU profile) "
               "have changed since\n",
               changed, changed == 1 ? " was" : "s were", changed == 1 ? "its point" : "their points");
  if (remaining_after > 0) {
    fmt::print("  stopped after {} point{} (--max-points): {} remain; run the same command again to resume\n",
               pending.size(), pending.size() == 1 ? "" : "s", remaining_after);
    return;
  }
  scenario::write_sweep_results(grid, out);
  print_table(grid, out);
  fmt::print("  outputs          {}/results.csv, results.json, points/\n", out.string());
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand(
      "sweep", "Run a grid of scenarios (knobs × traces × models × GPUs × policies) on every core, resumable; "
               "under mpirun (MPI build) as ranks across machines");
  cmd->add_option("grid", args->grid, "Grid YAML: base scenario and axes (docs/sweep.md)")->required();
  cmd->add_option("-o,--output", args->out_dir, "Output folder (default: out/<grid name>)");
  cmd->add_option("-j,--threads", args->threads, "Simulations at once per rank (default: the machine's cores / its ranks)");
  cmd->add_option_function<std::string>(
      "--max-points",
      [args](const std::string& s) { args->max_points = whole_number(s, "--max-points", 1, 1'000'000); },
      "Stop after running this many points (the rest run when the sweep is started again)");
  cmd->add_flag("--collect", args->collect, "Only gather the finished points into results.csv and results.json");
  cmd->add_flag("--check", args->check, "Run every simulation with the invariant checks of `headroom run --check` (slow)");
  cmd->callback([args] {
    Ranks ranks;  // MPI_Init under mpirun; a clear error under mpirun in a build without MPI
    if (ranks.size() == 1) {
      sweep(*args, ranks);
      return;
    }
    // Under MPI an error on one rank must end them all (the others would wait in a collective).
    try {
      sweep(*args, ranks);
    } catch (const InputError& e) {
      if (ranks.rank() == 0) fmt::print(stderr, "headroom: error: {}\n", e.what());
      else fmt::print(stderr, "headroom: error (rank {}): {}\n", ranks.rank(), e.what());
      ranks.abort(2);
    } catch (const std::bad_alloc&) {
      fmt::print(stderr, "headroom: error (rank {}): {}\n", ranks.rank(),
                 OutOfMemory("running 'headroom sweep'").what());
      ranks.abort(2);
    } catch (const std::exception& e) {
      fmt::print(stderr, "headroom: internal error (rank {}): {}\n", ranks.rank(), e.what());
      ranks.abort(1);
    }
  });
}

}  // namespace headroom::cli
