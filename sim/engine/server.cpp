#include "sim/engine/server.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/core/downsample.hpp"
#include "sim/core/error.hpp"
#include "sim/engine/engine_limits.hpp"

#include "sim/latency/batch.hpp"
#include "sim/model/step_program.hpp"

namespace headroom::engine {

namespace {

constexpr std::size_t kMaxCachedPrograms = 4096;

}  // namespace

Server::Server(alloc::CachingAllocator& allocator, model::SlotTable& slots, const latency::StepLatencyModel& latency,
               Scheduler& scheduler, ServingOptions options)
    : allocator_(allocator), slots_(slots), latency_(latency), scheduler_(scheduler), options_(std::move(options)) {
  if (!options_.model) throw std::logic_error("ServingOptions::model is required");
}

const model::AllocationProgram& Server::program_for(const StepPlan& plan, bool graph_replay) {
  auto key = std::make_tuple(plan.total_tokens, plan.seqs(), plan.decode_seqs, graph_replay);
  auto it = programs_.find(key);
  if (it != programs_.end()) return it->second;
  if (programs_.size() >= kMaxCachedPrograms) programs_.clear();
  model::AllocationProgram program;
  if (graph_replay) {
    // The captured graph reuses the addresses it got at capture: only the eager sampler allocates.
    program = model::sampler_program(*options_.model, plan.seqs(), options_.tp, options_.sampler);
  } else {
    model::ForwardShape shape{plan.total_tokens, plan.seqs(), plan.decode_seqs, options_.tp};
    program = model::step_program(*options_.model, shape, options_.forward, options_.sampler);
  }
  return programs_.emplace(key, std::move(program)).first->second;
}

RequestRecord Server::record_of(const RequestState& r) const {
  RequestRecord rec;
  rec.id = r.id;
  rec.arrival_s = r.arrival_s;
  rec.prompt_tokens = r.prompt_tokens;
  rec.output_tokens = r.output_tokens;
  rec.cached_tokens = r.cached_tokens;
  rec.preemptions = r.preemptions;
  rec.aborted = r.status == RequestStatus::aborted;
  if (r.first_token_s >= 0) rec.ttft_s = r.first_token_s - r.arrival_s;
  if (r.finish_s >= 0) {
    rec.e2e_s = r.finish_s - r.arrival_s;
    if (r.output_tokens > 1 && r.first_token_s >= 0)
      rec.tpot_s = (r.finish_s - r.first_token_s) / static_cast<double>(r.output_tokens - 1);
  }
  return rec;
}

ServingResult Server::run(workload::RequestSource& source, const std::function<void(const RequestRecord&)>& on_request,
                          const std::function<void(double)>& on_progress) {
  ServingResult result;
  scheduler_.attach(&table_);
  EventQueue queue;
  workload::Request next;
  bool have_next = source.next(next);
  if (have_next) queue.schedule(next.arrival_s, EventKind::Arrival, next.id);

  StepPlan plan;
  model::ProgramRun run;
  latency::Batch batch;
  std::vector<std::uint64_t> finished;
  auto reserved_of = [](const TimelinePoint& p) { return p.reserved; };
  StreamingDownsample<TimelinePoint, decltype(reserved_of)> points(options_.timeline_buckets, reserved_of);
  bool busy = false;
  bool graph_step = false;
  alloc::Block* canary = options_.release_on_oom;
  Bytes max_reserved_seen = 0;

  // A request leaves: its record goes out, then its row and the scheduler's state for it go away.
  auto emit = [&](std::uint64_t id) {
    if (on_request) on_request(record_of(table_[id]));
    scheduler_.release(id);
    table_.drop(id);
  };
  // --check: the scheduler's and its KV manager's invariants after every call that changes them; the
  // allocator checks its own after each of its operations.
  auto check = [&] {
    if (options_.check_invariants) [[unlikely]]
      scheduler_.check_invariants();
  };
  if (options_.check_invariants) {
    allocator_.set_check_each_operation(true);
    allocator_.check_invariants();  // the state start-up left
    scheduler_.check_invariants();
  }

  // Plans and launches the next step at `now`; false when the server died.
  auto start_step = [&](Seconds now) -> bool {
    while (!busy) {
      plan.clear();
      scheduler_.schedule(now, plan);
      check();
      for (std::uint64_t id : plan.aborted) {
        const RequestState& r = table_[id];
        // Refused before it ran (too long for the engine), or given up on later (SGLang's last decode).
        if (r.computed_tokens == 0 && r.output_tokens == 0) ++result.rejected;
        else ++result.aborted;
        emit(id);
      }
      if (plan.empty()) return true;
      graph_step = options_.max_graph_batch > 0 && plan.decode_seqs == plan.seqs() &&
                   plan.seqs() <= options_.max_graph_batch;
      const model::AllocationProgram& program = program_for(plan, graph_step);
      slots_.prepare(program);
      allocator_.set_clock_us(static_cast<std::int64_t>(now * 1e6));
      model::run_program(allocator_, program, slots_, run);
      result.allocator_mallocs += run.allocations;
      if (run.oom && canary) {
        // release_on_oom: the canary goes back to the cache and the step runs again.
        allocator_.free(canary);
        canary = nullptr;
        result.canary_released_s = now;
        model::run_program(allocator_, program, slots_, run);
        result.allocator_mallocs += run.allocations;
      }
      if (run.oom) {
        OomEvent ev;
        ev.time_s = now;
        ev.step = static_cast<std::uint64_t>(result.steps);
        ev.tokens = plan.total_tokens;
        ev.seqs = plan.seqs();
        const model::ProgramOp& op = program.ops[run.oom_op];
        ev.tensor = op.layer >= 0 ? fmt::format("{} (layer {})", model::tensor_name(op.tensor), op.layer)
                                  : std::string(model::tensor_name(op.tensor));
        ev.info = *run.oom;
        ++result.oom_count;
        if (result.ooms.size() < kMaxOomEvents) result.ooms.push_back(ev);
        if (options_.on_oom == OnOom::stop) {
          result.died = true;
          return false;
        }
        // The step is dropped: its requests fail (the client sees an error) and the server goes on.
        scheduler_.drop_step(plan);
        check();
        for (const ScheduledRequest& s : plan.scheduled) {
          if (table_[s.id].status == RequestStatus::aborted) {
            ++result.aborted;
            emit(s.id);
          }
        }
        continue;
      }
      batch = latency::Batch{};
      for (const ScheduledRequest& s : plan.scheduled) {
        if (s.is_decode) batch.add_decode(s.context_tokens);
        else batch.add_prefill(s.new_tokens, s.context_tokens);
      }
      batch.cuda_graph = graph_step;
      Seconds dt = latency_.step_time(batch);
      // `!(x <= max)` also catches NaN and inf: neither may reach a request's times.
      if (!(dt >= 0) || !(now + dt <= limits::kMaxClockS)) [[unlikely]]
        throw InputError(fmt::format("simulation: step {} at {:.6g} s takes {} s, which puts the clock beyond the limit "
                                     "of {:g} s of simulated time (docs/limits.md); check the GPU profile's bandwidth "
                                     "and flops and the latency model",
                                     result.steps, now, dt, limits::kMaxClockS));
      busy = true;
      queue.schedule(now + dt, EventKind::StepEnd, static_cast<std::uint64_t>(result.steps));
    }
    return true;
  };

  bool alive = true;
  while (alive && !queue.empty()) {
    Event e = queue.pop();
    Seconds now = e.time;
    if (e.kind == EventKind::Arrival) {
      if (next.id != table_.end_id())
        throw std::logic_error(fmt::format("request ids must be dense: got {} after {}", next.id, table_.end_id()));
      // The new row takes the request's hashes and hands its slot's old buffer (a dropped row's)
      // to the next request: once the table has grown, arrivals allocate nothing.
      RequestState& st = table_.append();
      std::vector<std::uint64_t> spare = std::move(st.prefix_hashes);
      st = RequestState{};
      st.id = next.id;
      st.arrival_s = next.arrival_s;
      st.prompt_tokens = next.input_tokens;
      st.max_output_tokens = std::max<Tokens>(next.output_tokens, 1);
      st.prefix_hashes = std::move(next.prefix_hashes);
      st.prefix_block_tokens = next.prefix_block_tokens;
      ++result.arrived;
      result.peak_table_rows = std::max(result.peak_table_rows, static_cast<std::int64_t>(table_.size()));
      scheduler_.add_request(st.id);  // a refusal shows up in the next plan's `aborted`
      check();
      next = workload::Request{};
      spare.clear();
      next.prefix_hashes = std::move(spare);
      have_next = source.next(next);
      if (have_next) queue.schedule(std::max(next.arrival_s, now), EventKind::Arrival, next.id);
      alive = start_step(now);
    } else if (e.kind == EventKind::StepEnd) {
      busy = false;
      ++result.steps;
      if (graph_step) ++result.graph_steps;
      finished.clear();
      scheduler_.complete_step(plan, now, finished);
      check();
      for (const ScheduledRequest& s : plan.scheduled)
        if (s.samples) ++result.generated_tokens;
      for (std::uint64_t id : finished) {
        ++result.completed;
        emit(id);
      }
      const alloc::Fragmentation fr = allocator_.fragmentation();
      if (fr.reserved > max_reserved_seen) {
        max_reserved_seen = fr.reserved;
        result.fragmentation_at_peak_reserved = fr;
      }
      KvUsage kv = scheduler_.kv_usage();
      points.add(TimelinePoint{now, fr.allocated, fr.reserved,
                                     run.peak_allocated > 0 ? run.peak_allocated : 0, fr.largest_free_block,
                                     fr.free_blocks, kv.used_tokens, scheduler_.running(), scheduler_.waiting(),
                                     result.arrived, scheduler_.counters().preemptions});
      if (on_progress && result.steps % 1024 == 0) on_progress(now);
      alive = start_step(now);
    }
    result.end_time_s = now;
  }
  const alloc::AllocatorStats& st = allocator_.stats();
  result.peak_allocated = static_cast<Bytes>(st.allocated_bytes[alloc::kAll].peak);
  result.peak_reserved = static_cast<Bytes>(st.reserved_bytes[alloc::kAll].peak);
  result.counters = scheduler_.counters();
  result.preemptions = result.counters.preemptions;
  result.timeline = points.take(options_.max_timeline_points);
  return result;
}

}  // namespace headroom::engine
