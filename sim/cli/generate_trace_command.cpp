// headroom generate-trace: a synthetic request trace written as a file, row by row (fixed memory
// however many requests), for replaying long traces (the scale benchmark, scripts/bench_scale.sh).
// Poisson arrivals at --rate, lognormal prompt and output lengths, all from --seed: the same flags
// give the same bytes.
#include <cstdint>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "sim/cli/commands.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "sim/workload/azure_csv_writer.hpp"
#include "sim/workload/make_source.hpp"
#include "sim/workload/workload_limits.hpp"
#include "sim/workload/workload_spec.hpp"

namespace headroom::cli {

namespace {

struct GenerateTraceArgs {
  std::string format = "azure";
  std::uint64_t requests = 0;
  double rate = 0;
  std::uint64_t seed = 1;
  double input_mean = 1000, input_cv = 1;
  workload::Tokens input_max = 8192;
  double output_mean = 200, output_cv = 1;
  workload::Tokens output_max = 2048;
  std::string out;
  bool allow_large = false;
};

workload::LengthSpec lognormal(double mean, double cv, workload::Tokens max) {
  workload::LengthSpec l;
  l.dist = workload::LengthKind::lognormal;
  l.mean = mean;
  l.cv = cv;
  l.min = 1;
  l.max = max;
  return l;
}

void generate_trace(const GenerateTraceArgs& a) {
  namespace lim = workload::limits;
  if (!(a.rate >= lim::kMinRate && a.rate <= lim::kMaxRate))
    throw InputError(fmt::format("--rate: expected a rate from {:g} to {:g} requests per second (docs/limits.md), got {}",
                                 lim::kMinRate, lim::kMaxRate, a.rate));
  if (!a.allow_large && a.requests > lim::kMaxRequests)
    throw InputError(fmt::format("--requests: {} is above the limit of {} for one workload (docs/limits.md); add "
                                 "--allow-large to write them anyway",
                                 a.requests, lim::kMaxRequests));
  if (!a.allow_large && static_cast<double>(a.requests) / a.rate > lim::kMaxDurationS)
    throw InputError(fmt::format("--requests {} at --rate {:g} span about {:.0f} s, above the limit of {:.0f} s (30 "
                                 "days) for one workload (docs/limits.md); add --allow-large to write them anyway",
                                 a.requests, a.rate, static_cast<double>(a.requests) / a.rate, lim::kMaxDurationS));
  workload::WorkloadSpec spec;
  spec.seed = a.seed;
  spec.allow_large = a.allow_large;
  spec.where = "generate-trace";
  spec.allow_large_how = "add --allow-large";
  workload::SyntheticSpec syn;
  syn.arrivals.process = workload::ArrivalKind::poisson;
  syn.arrivals.rate = a.rate;
  syn.input = lognormal(a.input_mean, a.input_cv, a.input_max);
  syn.output = lognormal(a.output_mean, a.output_cv, a.output_max);
  syn.requests = a.requests;
  spec.synthetic = syn;
  std::unique_ptr<workload::RequestSource> source = workload::make_source(spec);  // InputError on bad lengths
  AtomicOutputFile file(a.out);
  const std::uint64_t rows = workload::write_azure_csv(*source, file.stream());
  file.commit();  // a failed write throws here, saying why
  fmt::print("{}: {} requests, Azure CSV, Poisson arrivals at {:g}/s, seed {}\n", a.out, rows, a.rate, a.seed);
}

}  // namespace

void add_generate_trace_command(CLI::App& app) {
  auto args = std::make_shared<GenerateTraceArgs>();
  auto* cmd = app.add_subcommand("generate-trace", "Write a synthetic request trace file (streamed, deterministic)");
  cmd->add_option("--format", args->format, "File format (azure: TIMESTAMP,ContextTokens,GeneratedTokens)")
      ->check(CLI::IsMember({"azure"}))
      ->capture_default_str();
  cmd->add_option("--requests", args->requests, "Number of requests")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--rate", args->rate, "Poisson arrival rate, requests per second")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--seed", args->seed, "Seed of arrivals and lengths")->capture_default_str();
  cmd->add_option("--input-mean", args->input_mean, "Mean prompt tokens (lognormal)")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--input-cv", args->input_cv, "Coefficient of variation of prompt tokens")->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--input-max", args->input_max, "Longest prompt")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--output-mean", args->output_mean, "Mean output tokens (lognormal)")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--output-cv", args->output_cv, "Coefficient of variation of output tokens")->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--output-max", args->output_max, "Longest output")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("-o,--output", args->out, "Trace file to write")->required();
  cmd->add_flag("--allow-large", args->allow_large,
                "Lift the caps on requests (10 million) and span (30 days) of docs/limits.md");
  cmd->callback([args] { generate_trace(*args); });
}

}  // namespace headroom::cli
