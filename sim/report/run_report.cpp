#include "sim/report/run_report.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include "sim/core/units.hpp"
#include "sim/engine/engine_registry.hpp"
#include "sim/report/run_report_page.hpp"
#include "sim/report/six_decimals.hpp"


namespace headroom::report {

void LatencyCollector::add(const engine::RequestRecord& r) {
  if (r.aborted) return;
  if (r.ttft_s >= 0) ttft.add(r.ttft_s);
  if (r.tpot_s >= 0) tpot.add(r.tpot_s);
  if (r.e2e_s >= 0) e2e.add(r.e2e_s);
  if (r.queue_s >= 0) queue.add(r.queue_s);
}

Distribution LatencyCollector::summarize(const LatencyHistogram& h) {
  Distribution d = h.summary();
  d.cdf = h.cdf(kCdfPoints);
  return d;
}

namespace {

nlohmann::json dist_json(const Distribution& d) {
  nlohmann::json x = nlohmann::json::array(), p = nlohmann::json::array();
  for (const auto& [value, fraction] : d.cdf) {
    x.push_back(value);
    p.push_back(fraction);
  }
  return {{"count", d.count},
          {"mean", statistic_json(d, d.mean)},
          {"p50", statistic_json(d, d.p50)},
          {"p90", statistic_json(d, d.p90)},
          {"p99", statistic_json(d, d.p99)},
          {"max", statistic_json(d, d.max)},
          {"cdf", {{"x", x}, {"p", p}}}};
}

nlohmann::json oom_json(const engine::OomEvent& e) {
  const alloc::OomInfo& o = e.info;
  Bytes unallocated = o.reserved > o.allocated + o.private_pool_free ? o.reserved - o.allocated - o.private_pool_free : 0;
  return {{"time_s", e.time_s},
          {"step", e.step},
          {"tokens", e.tokens},
          {"seqs", e.seqs},
          {"tensor", e.tensor},
          {"tried_bytes", o.alloc_size},
          {"requested_bytes", o.requested},
          {"free_bytes", o.free},
          {"allocated_bytes", o.allocated},
          {"reserved_bytes", o.reserved},
          {"reserved_unallocated_bytes", unallocated},
          {"private_pool_bytes", o.private_pool_free},
          {"message", o.message()}};
}

nlohmann::json parallel_json(const engine::ParallelStartup& p) {
  const model::RankPlacement& r = p.placement;
  nlohmann::json communicators = nlohmann::json::array();
  for (const engine::Communicator& c : p.communicators.communicators)
    communicators.push_back({{"group", c.group}, {"ranks", c.ranks}, {"bytes", c.bytes}});
  return {{"simulated_rank", p.rank},
          {"why", p.why},
          {"placement",
           {{"attn_tp", r.attn_tp}, {"dense_tp", r.dense_tp}, {"moe_tp", r.moe_tp}, {"moe_ep", r.moe_ep},
            {"ep_rank", r.ep_rank}, {"pp", r.pp}, {"pp_rank", r.pp_rank}}},
          {"nccl_communicators", communicators},
          {"nccl_bytes", p.communicators.nccl},
          {"custom_all_reduce_bytes", p.communicators.custom_all_reduce},
          {"custom_all_reduce_rank_data_bytes", p.communicators.custom_all_reduce_rank_data}};
}

}  // namespace

nlohmann::json headroom_json(const engine::ClosestCall& c, Bytes non_torch, const MemoryBudget& budget) {
  const bool named = c.step >= 0;
  // The engine's budget covers the whole process: non-torch bytes and everything torch reserved.
  const double left = static_cast<double>(budget.bytes) - static_cast<double>(non_torch + c.reserved);
  return {{"min_free_bytes", c.min_free},
          {"at_s", named ? nlohmann::json(c.time_s) : nlohmann::json(nullptr)},
          {"step", named ? nlohmann::json(c.step) : nlohmann::json(nullptr)},
          {"allocation", named ? nlohmann::json(c.allocation()) : nlohmann::json(nullptr)},
          {"allocation_bytes", named ? nlohmann::json(c.bytes) : nlohmann::json(nullptr)},
          {"reserved_bytes", c.reserved},
          {"budget_left_bytes", budget.rule.empty() ? nlohmann::json(nullptr)
                                                    : nlohmann::json(static_cast<std::int64_t>(left))}};
}

std::string headroom_line(const nlohmann::json& h) {
  const auto bytes = [](const nlohmann::json& v) { return format_bytes(v.get<Bytes>()); };
  std::string line = fmt::format("{} free on the device at the lowest", bytes(h.at("min_free_bytes")));
  if (h.at("step").is_null())
    line += ", as start-up left it (no step took more from the device)";
  else
    line += fmt::format(", at {:.3f} s (step {}, allocating {} of {})", h.at("at_s").get<double>(),
                        h.at("step").get<std::int64_t>(), h.at("allocation").get<std::string>(),
                        bytes(h.at("allocation_bytes")));
  if (const nlohmann::json& left = h.at("budget_left_bytes"); !left.is_null()) {
    const std::int64_t b = left.get<std::int64_t>();
    // Non-torch + reserved against the budget line (SGLang's and LightLLM's budgets are their static
    // share, which activations exceed by design: docs/report.md).
    line += fmt::format("; the process then {} {} the memory budget", format_bytes(static_cast<Bytes>(b >= 0 ? b : -b)),
                        b >= 0 ? "under" : "over");
  }
  return line;
}

MemoryBudget engine_memory_budget(const engine::StartupResult& st, Bytes capacity) {
  const engine::EngineTraits& traits = engine::engine_traits(st.config);
  const double fraction = traits.started_fraction(st);
  const std::string_view knob = traits.fraction_knob;
  if (fraction <= 0) return {};
  return {static_cast<Bytes>(fraction * static_cast<double>(capacity)), fmt::format("{} {:g} × capacity", knob, fraction)};
}

nlohmann::json summary_json(const RunContext& run, const Outcome& o) {
  const engine::StartupResult& st = o.start.startup;
  nlohmann::json j;
  j["scenario"] = run.scenario;
  j["engine"] = run.engine;
  j["model"] = run.model;
  j["gpu"] = {{"profile", run.gpu}, {"source", run.gpu_source}, {"capacity_bytes", run.capacity}};
  const MemoryBudget budget = o.start.device_budget ? MemoryBudget{*o.start.device_budget, o.start.device_budget_rule}
                                                    : engine_memory_budget(st, run.capacity);
  j["memory_budget"] = budget.rule.empty() ? nlohmann::json(nullptr)
                                           : nlohmann::json({{"bytes", budget.bytes}, {"rule", budget.rule}});
  nlohmann::json startup = {{"ok", st.ok},
                            {"stage", std::string(engine::startup_stage_name(st.stage))},
                            {"failure", st.ok ? nlohmann::json(nullptr) : nlohmann::json(st.failure)},
                            {"kv_tokens", st.kv_tokens},
                            {"kv_blocks", st.kv_blocks},
                            {"kv_block_tokens", st.kv_block_tokens},
                            {"max_running_requests", st.max_running_requests},
                            {"graph_batch_sizes", st.graph_batch_sizes},
                            {"bytes",
                             {{"weights", st.bytes.weights},
                              {"rotary_cache", st.bytes.rotary_cache},
                              {"kv_cache", st.bytes.kv_cache},
                              {"request_pool", st.bytes.request_pool},
                              {"workspaces", st.bytes.workspaces},
                              {"graph_pool", st.bytes.graph_pool},
                              {"graph_execs", st.bytes.graph_execs},
                              {"activations_peak", st.bytes.activations_peak},
                              {"non_torch", st.bytes.non_torch},
                              {"reserved", st.bytes.reserved},
                              {"device_free", st.bytes.device_free}}}};
  nlohmann::json filled = nlohmann::json::array();
  for (const auto& f : st.filled) filled.push_back({{"field", f.field}, {"value", f.value}, {"why", f.why}});
  startup["filled_defaults"] = filled;
  startup["parallel"] = parallel_json(st.parallel);
  j["startup"] = startup;
  if (!st.ok) {
    j["oom"] = st.oom ? nlohmann::json({{"time_s", 0.0},
                                        {"stage", std::string(engine::startup_stage_name(st.stage))},
                                        {"tried_bytes", st.oom->alloc_size},
                                        {"free_bytes", st.oom->free},
                                        {"allocated_bytes", st.oom->allocated},
                                        {"reserved_unallocated_bytes",
                                         st.oom->reserved > st.oom->allocated ? st.oom->reserved - st.oom->allocated : 0},
                                        {"message", st.oom->message()}})
                      : nlohmann::json(nullptr);
    j["requests"] = {{"arrived", 0}, {"completed", 0}, {"aborted", 0}, {"rejected", 0}, {"unfinished", 0}};
    j["preemptions"] = 0;
    j["metrics"] = {{"ttft_s", dist_json({})}, {"tpot_s", dist_json({})}, {"e2e_s", dist_json({})}, {"queue_s", dist_json({})}};
    return j;
  }
  const engine::ServingResult& r = *o.serving;
  j["oom"] = r.ooms.empty() ? nlohmann::json(nullptr) : oom_json(r.ooms.front());
  nlohmann::json all = nlohmann::json::array();
  for (const auto& e : r.ooms) all.push_back(oom_json(e));
  j["ooms"] = all;  // the first engine::kMaxOomEvents
  j["oom_count"] = r.oom_count;
  j["died"] = r.died;
  // Unfinished: still queued or running when the trace ran out (or when the server died).
  j["requests"] = {{"arrived", r.arrived},
                   {"completed", r.completed},
                   {"aborted", r.aborted},
                   {"rejected", r.rejected},
                   {"unfinished", r.arrived - r.completed - r.aborted - r.rejected}};
  j["preemptions"] = r.preemptions;
  j["steps"] = {{"total", r.steps}, {"cuda_graph", r.graph_steps}};
  j["simulated_s"] = r.end_time_s;
  j["generated_tokens"] = r.generated_tokens;
  j["throughput"] = {{"output_tokens_per_s", o.tokens_per_s}, {"requests_per_s", o.requests_per_s}};
  j["metrics"] = {{"ttft_s", dist_json(o.ttft)}, {"tpot_s", dist_json(o.tpot)}, {"e2e_s", dist_json(o.e2e)},
                  {"queue_s", dist_json(o.queue)}};
  j["memory"] = {{"peak_allocated_bytes", r.peak_allocated},
                 {"peak_reserved_bytes", r.peak_reserved},
                 {"fragmentation_at_peak_reserved",
                  {{"reserved_unallocated_bytes", r.fragmentation_at_peak_reserved.reserved_unallocated},
                   {"largest_free_block_bytes", r.fragmentation_at_peak_reserved.largest_free_block},
                   {"free_blocks", r.fragmentation_at_peak_reserved.free_blocks}}}};
  j["headroom"] = headroom_json(r.closest_call, st.bytes.non_torch, budget);
  j["prefix_cache"] = {{"hit_tokens", r.counters.prefix_hit_tokens}, {"query_tokens", r.counters.prefix_query_tokens}};
  return j;
}

std::string verdict(const RunContext& run, const Outcome& o) {
  const engine::StartupResult& st = o.start.startup;
  std::string who = fmt::format("{} on {} with {}", run.engine, run.gpu, run.model);
  if (!st.ok) return fmt::format("{} fails at start-up ({}): {}", who, engine::startup_stage_name(st.stage), st.failure);
  const engine::ServingResult& r = *o.serving;
  if (r.died) {
    const engine::OomEvent& e = r.ooms.front();
    return fmt::format("{} runs out of memory at {:.1f} s of the trace, in {} of a {}-token step, after serving {} of "
                       "{} arrived requests",
                       who, e.time_s, e.tensor, e.tokens, r.completed, r.arrived);
  }
  if (!r.ooms.empty())
    return fmt::format("{} would have run out of memory {} times (first at {:.1f} s); {} requests were dropped", who,
                       r.oom_count, r.ooms.front().time_s, r.aborted);
  if (r.completed == r.arrived) return fmt::format("{} serves all {} requests without running out of memory", who, r.completed);
  return fmt::format("{} serves {} of {} requests without running out of memory ({} refused as too long, {} given up, "
                     "{} unfinished)",
                     who, r.completed, r.arrived, r.rejected, r.aborted, r.arrived - r.completed - r.rejected - r.aborted);
}

void write_request_header(TextWriter& out) {
  out.write("id,arrival_s,prompt_tokens,output_tokens,cached_tokens,preemptions,queue_s,ttft_s,tpot_s,e2e_s,aborted\n");
}

void write_request_row(TextWriter& out, const engine::RequestRecord& r) {
  out.print(FMT_COMPILE("{},"), r.id);
  write_six_decimals(out, r.arrival_s);
  out.print(FMT_COMPILE(",{},{},{},{},"), r.prompt_tokens, r.output_tokens, r.cached_tokens, r.preemptions);
  for (const double v : {r.queue_s, r.ttft_s, r.tpot_s, r.e2e_s}) {
    if (!(v < 0)) write_six_decimals(out, v);
    out.put(',');
  }
  out.write(r.aborted ? "1\n" : "0\n");
}

void write_timeline_csv(TextWriter& out, const engine::StartupResult& st,
                        const std::vector<engine::TimelinePoint>& timeline) {
  out.write("time_s,weights_bytes,kv_pool_bytes,workspace_bytes,graph_pool_bytes,request_pool_bytes,activation_bytes,"
            "cached_free_bytes,allocated_bytes,reserved_bytes,largest_free_block_bytes,free_blocks,device_free_bytes,"
            "free_or_cached_bytes,kv_used_tokens,running,waiting,arrived,preemptions\n");
  // The start-up categories are the same on every row: formatted once.
  fmt::memory_buffer fixed;
  fmt::format_to(fmt::appender(fixed), FMT_COMPILE(",{},{},{},{},{},"), st.bytes.weights, st.bytes.kv_cache,
                 st.bytes.workspaces, st.bytes.graph_pool, st.bytes.request_pool);
  const std::string_view fixed_cells(fixed.data(), fixed.size());
  for (const auto& p : timeline) {
    const Bytes cached_free = p.reserved > p.allocated ? p.reserved - p.allocated : 0;
    write_six_decimals(out, p.time_s);
    out.write(fixed_cells);
    out.print(FMT_COMPILE("{},{},{},{},{},{},{},{},{},{},{},{},{}\n"), p.step_peak_allocated, cached_free,
              p.allocated, p.reserved, p.largest_free_block, p.free_blocks, p.device_free, p.free_or_cached,
              p.kv_used_tokens, p.running, p.waiting, p.arrived, p.preemptions);
  }
}

void write_timeline_csv(std::ostream& out, const engine::StartupResult& st,
                        const std::vector<engine::TimelinePoint>& timeline) {
  TextWriter w(out);
  write_timeline_csv(w, st, timeline);
}

}  // namespace headroom::report
