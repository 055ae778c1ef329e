#include "sim/engine/server.hpp"

#include <algorithm>
#include <iterator>
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
// Graph batches up to this many seqs have their programs indexed by seqs (Server::graph_programs_).
constexpr std::int64_t kMaxDirectGraphBatch = 65536;

// A step's program run: no per-layer peaks (nothing here reads them).
const model::RunOptions kServingRun{.graph_pool = std::nullopt, .stream = 0, .layer_peaks = false};

}  // namespace

Server::Server(alloc::CachingAllocator& allocator, model::SlotTable& slots, const latency::StepLatencyModel& latency,
               Scheduler& scheduler, ServingOptions options)
    : allocator_(allocator), slots_(slots), latency_(latency), scheduler_(scheduler), options_(std::move(options)) {
  if (!options_.model) throw std::logic_error("ServingOptions::model is required");
  if (options_.max_graph_batch > 0 && options_.max_graph_batch <= kMaxDirectGraphBatch)
    graph_programs_.resize(static_cast<std::size_t>(options_.max_graph_batch) + 1);
}

Server::StepProgram& Server::program_for(const StepPlan& plan, bool graph_replay) {
  if (options_.eager && !graph_replay) {
    // The eager path's temporaries follow every sequence's context: one program per step.
    eager_seqs_.clear();
    for (const ScheduledRequest& r : plan.scheduled) eager_seqs_.push_back({r.new_tokens, r.context_tokens});
    eager_program_.program = model::eager_step_program(*options_.model, eager_seqs_, *options_.eager, options_.sampler);
    eager_program_.memo.state.reset();  // a new program: no closed run of it yet
    return eager_program_;
  }
  // Most steps replay a graph whose program is indexed by its seqs.
  GraphProgram* graph = nullptr;
  if (graph_replay && static_cast<std::size_t>(plan.seqs()) < graph_programs_.size()) {
    graph = &graph_programs_[static_cast<std::size_t>(plan.seqs())];
    if (graph->program && graph->tokens == plan.total_tokens) return *graph->program;
  }
  auto indexed = [&](StepProgram& program) -> StepProgram& {
    if (graph) *graph = GraphProgram{plan.total_tokens, &program};
    return program;
  };
  auto key = std::make_tuple(plan.seqs(), plan.decode_seqs, graph_replay, plan.total_tokens);
  auto it = programs_.lower_bound(key);
  if (it != programs_.end() && it->first == key) return indexed(it->second);
  // A new token count: most likely a prefill shape of the same structure as a cached neighbour of
  // the same seqs and decode seqs (ordered next to it), whose ops only need new sizes.
  std::optional<model::AllocationProgram> refilled;
  if (!graph_replay) {
    auto same_seqs = [&](auto at) {
      return std::get<0>(at->first) == plan.seqs() && std::get<1>(at->first) == plan.decode_seqs && !std::get<2>(at->first);
    };
    auto like = it != programs_.end() && same_seqs(it) ? it
                : it != programs_.begin() && same_seqs(std::prev(it)) ? std::prev(it)
                                                                      : programs_.end();
    if (like != programs_.end()) {
      model::ForwardShape shape{plan.total_tokens, plan.seqs(), plan.decode_seqs, options_.tp};
      refilled = model::refill_step_program(model::AllocationProgram(like->second.program), *options_.model, shape,
                                            options_.forward, options_.sampler);
    }
  }
  if (programs_.size() >= kMaxCachedPrograms) {
    programs_.clear();
    std::fill(graph_programs_.begin(), graph_programs_.end(), GraphProgram{});
  }
  if (refilled) return programs_.emplace(key, StepProgram{std::move(*refilled), {}}).first->second;
  model::AllocationProgram program;
  if (graph_replay) {
    // The captured graph reuses the addresses it got at capture: only the eager sampler allocates,
    // from the graph's logits where the graph made them (SGLang, LightLLM). Only the last pipeline
    // stage samples.
    if (model::runs_sampler(options_.forward)) {
      model::SamplerOptions sampler = options_.sampler;
      sampler.logits_from_graph = options_.graph_computes_logits;
      program = model::sampler_program(*options_.model, plan.seqs(), options_.tp, sampler);
    }
  } else {
    model::ForwardShape shape{plan.total_tokens, plan.seqs(), plan.decode_seqs, options_.tp};
    program = model::step_program(*options_.model, shape, options_.forward, options_.sampler);
  }
  return indexed(programs_.emplace(key, StepProgram{std::move(program), {}}).first->second);
}

std::string ClosestCall::allocation() const {
  if (step < 0) return {};
  return layer >= 0 ? fmt::format("{} (layer {})", model::tensor_name(tensor), layer) : std::string(model::tensor_name(tensor));
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
  if (r.first_scheduled_s >= 0) rec.queue_s = r.first_scheduled_s - r.arrival_s;
  if (r.first_token_s >= 0) rec.ttft_s = r.first_token_s - r.arrival_s;
  if (r.finish_s >= 0) {
    rec.e2e_s = r.finish_s - r.arrival_s;
    if (r.output_tokens > 1 && r.first_token_s >= 0)
      rec.tpot_s = (r.finish_s - r.first_token_s) / static_cast<double>(r.output_tokens - 1);
  }
  return rec;
}

// One replay of a workload (SimPy's shape): the state of the run and a handler per event kind.
// Arrival: a request joins the table and the scheduler. StepEnd: the step's requests advance, the
// finished ones leave, memory and load are sampled. After either, an idle engine starts its next
// step, which schedules the next StepEnd.
class Server::Run {
 public:
  Run(Server& server, workload::RequestSource& source, const std::function<void(const RequestRecord&)>& on_request,
      const std::function<void(double)>& on_progress)
      : s_(server), source_(source), on_request_(on_request), on_progress_(on_progress),
        points_(server.options_.timeline_buckets, ReservedOf{}), canary_(server.options_.release_on_oom) {}

  ServingResult run() {
    s_.scheduler_.attach(&s_.table_);
    have_next_ = source_.next(next_);
    if (have_next_) queue_.schedule(next_.arrival_s, EventKind::Arrival, next_.id);
    ClosestCall& c = result_.closest_call;
    c.min_free = low_free_ = s_.allocator_.device().free_bytes();
    low_free_or_cached_ = free_or_cached_now();
    c.reserved = s_.allocator_.reserved_bytes();
    if (s_.options_.check_invariants) {
      s_.allocator_.set_check_each_operation(true);
      s_.allocator_.check_invariants();  // the state start-up left
      s_.scheduler_.check_invariants();
    }
    bool alive = true;
    while (alive && !queue_.empty()) {
      const Event e = queue_.pop();
      switch (e.kind) {
        case EventKind::Arrival: alive = on_arrival(e.time); break;
        case EventKind::StepEnd: alive = on_step_end(e.time); break;
      }
      result_.end_time_s = e.time;
    }
    return finish();
  }

 private:
  struct ReservedOf {
    Bytes operator()(const TimelinePoint& p) const { return p.reserved; }
  };

  // The next request of the workload joins the table and the scheduler; the next one is read.
  bool on_arrival(Seconds now) {
    RequestTable& table = s_.table_;
    if (next_.id != table.end_id())
      throw std::logic_error(fmt::format("request ids must be dense: got {} after {}", next_.id, table.end_id()));
    // The new row takes the request's hashes and hands its slot's old buffer (a dropped row's)
    // to the next request: once the table has grown, arrivals allocate nothing.
    RequestState& st = table.append();
    std::vector<std::uint64_t> spare = std::move(st.prefix_hashes);
    st = RequestState{};
    st.id = next_.id;
    st.arrival_s = next_.arrival_s;
    st.prompt_tokens = next_.input_tokens;
    st.max_output_tokens = std::max<Tokens>(next_.output_tokens, 1);
    st.prefix_hashes = std::move(next_.prefix_hashes);
    st.prefix_block_tokens = next_.prefix_block_tokens;
    ++result_.arrived;
    result_.peak_table_rows = std::max(result_.peak_table_rows, static_cast<std::int64_t>(table.size()));
    s_.scheduler_.add_request(st.id);  // a refusal shows up in the next plan's `aborted`
    check();
    next_ = workload::Request{};
    spare.clear();
    next_.prefix_hashes = std::move(spare);
    have_next_ = source_.next(next_);
    if (have_next_) queue_.schedule(std::max(next_.arrival_s, now), EventKind::Arrival, next_.id);
    const bool alive = start_step(now);
    if (!have_next_ && alive) {  // the last arrival: what is still queued now the arrivals stop
      result_.last_arrival_s = now;
      result_.waiting_at_last_arrival = s_.scheduler_.waiting();
    }
    return alive;
  }

  // The running step's kernels finish: its requests advance, the finished ones leave.
  bool on_step_end(Seconds now) {
    busy_ = false;
    ++result_.steps;
    if (graph_step_) ++result_.graph_steps;
    finished_.clear();
    s_.scheduler_.complete_step(plan_, now, finished_);
    check();
    for (const ScheduledRequest& r : plan_.scheduled)
      if (r.samples) ++result_.generated_tokens;
    for (std::uint64_t id : finished_) {
      ++result_.completed;
      emit(id);
    }
    sample(now);
    if (on_progress_ && result_.steps % 1024 == 0) on_progress_(now);
    return start_step(now);
  }

  // Memory and load at the end of a step: a timeline point, and the fragmentation at peak reserved.
  void sample(Seconds now) {
    const alloc::Fragmentation fr = s_.allocator_.fragmentation();
    if (fr.reserved > max_reserved_seen_) {
      max_reserved_seen_ = fr.reserved;
      result_.fragmentation_at_peak_reserved = fr;
    }
    const KvUsage kv = s_.scheduler_.kv_usage();
    const Bytes low = std::min(low_free_, s_.allocator_.device().free_bytes());
    const Bytes low_loose = std::min(low_free_or_cached_, free_or_cached_now());
    points_.add(TimelinePoint{now, fr.allocated, fr.reserved, run_.peak_allocated > 0 ? run_.peak_allocated : 0,
                              fr.largest_free_block, fr.free_blocks, low, low_loose, kv.used_tokens,
                              s_.scheduler_.running(), s_.scheduler_.waiting(), result_.arrived,
                              s_.scheduler_.counters().preemptions});
    low_free_ = s_.allocator_.device().free_bytes();
    low_free_or_cached_ = free_or_cached_now();
  }

  Bytes free_or_cached_now() const {
    return s_.allocator_.device().free_bytes() + s_.allocator_.reserved_bytes() - s_.allocator_.allocated_bytes();
  }

  // A program run's lowest free memory: the timeline's, and a new closest call (named by the op's
  // index into the program, no string built) when it is below every earlier one.
  void note_free(Seconds now, const model::AllocationProgram& program) {
    low_free_ = std::min(low_free_, run_.min_device_free);
    low_free_or_cached_ = std::min(low_free_or_cached_, run_.min_free_or_cached);
    ClosestCall& c = result_.closest_call;
    if (!run_.min_device_free_op || run_.min_device_free >= c.min_free) return;
    const model::ProgramOp& op = program.ops[*run_.min_device_free_op];
    c.min_free = run_.min_device_free;
    c.reserved = run_.reserved_at_min_free;
    c.time_s = now;
    c.step = result_.steps;
    c.tensor = op.tensor;
    c.layer = op.layer;
    c.bytes = op.bytes;
  }

  // Plans and launches the next step at `now` unless one is running; false when the server died.
  bool start_step(Seconds now) {
    while (!busy_) {
      plan_.clear();
      s_.scheduler_.schedule(now, plan_);
      check();
      for (std::uint64_t id : plan_.aborted) {
        const RequestState& r = s_.table_[id];
        // Refused before it ran (too long for the engine), or given up on later (SGLang's last decode).
        if (r.computed_tokens == 0 && r.output_tokens == 0) ++result_.rejected;
        else ++result_.aborted;
        emit(id);
      }
      if (plan_.empty()) return true;
      graph_step_ = s_.options_.max_graph_batch > 0 && plan_.decode_seqs == plan_.seqs() &&
                    plan_.seqs() <= s_.options_.max_graph_batch;
      if (!allocate_step(now, s_.program_for(plan_, graph_step_))) {
        if (s_.options_.on_oom == OnOom::stop) {
          result_.died = true;
          return false;
        }
        drop_step();
        continue;
      }
      const Seconds dt = step_time(now);
      busy_ = true;
      queue_.schedule(now + dt, EventKind::StepEnd, static_cast<std::uint64_t>(result_.steps));
    }
    return true;
  }

  // Runs the step's allocation program through the allocator; false on an OOM (recorded).
  bool allocate_step(Seconds now, StepProgram& step) {
    const model::AllocationProgram& program = step.program;
    s_.allocator_.set_clock_us(static_cast<std::int64_t>(now * 1e6));
    run_step(step);
    result_.allocator_mallocs += run_.allocations;
    note_free(now, program);
    if (run_.oom && canary_) {
      // release_on_oom: the canary goes back to the cache and the step runs again.
      s_.allocator_.free(canary_);
      canary_ = nullptr;
      result_.canary_released_s = now;
      run_step(step);
      result_.allocator_mallocs += run_.allocations;
      note_free(now, program);
    }
    if (!run_.oom) return true;
    OomEvent ev;
    ev.time_s = now;
    ev.step = static_cast<std::uint64_t>(result_.steps);
    ev.tokens = plan_.total_tokens;
    ev.seqs = plan_.seqs();
    const model::ProgramOp& op = program.ops[run_.oom_op];
    ev.tensor = op.layer >= 0 ? fmt::format("{} (layer {})", model::tensor_name(op.tensor), op.layer)
                              : std::string(model::tensor_name(op.tensor));
    ev.info = *run_.oom;
    ++result_.oom_count;
    if (result_.ooms.size() < kMaxOomEvents) result_.ooms.push_back(ev);
    return false;
  }

  void run_step(StepProgram& step) {
    if (!s_.options_.repeat_closed_runs)
      model::run_program(s_.allocator_, step.program, s_.slots_, run_, kServingRun);
    else if (model::run_program(s_.allocator_, step.program, s_.slots_, run_, kServingRun, step.memo))
      ++result_.repeated_steps;
  }

  // on_oom: continue. The step is dropped: its requests fail (the client sees an error) and the
  // server goes on.
  void drop_step() {
    s_.scheduler_.drop_step(plan_);
    check();
    for (const ScheduledRequest& r : plan_.scheduled) {
      if (s_.table_[r.id].status == RequestStatus::aborted) {
        ++result_.aborted;
        emit(r.id);
      }
    }
  }

  // The step's duration from the latency model.
  Seconds step_time(Seconds now) {
    batch_ = latency::Batch{};
    for (const ScheduledRequest& r : plan_.scheduled) {
      if (r.is_decode) batch_.add_decode(r.context_tokens);
      else batch_.add_prefill(r.new_tokens, r.context_tokens);
    }
    batch_.cuda_graph = graph_step_;
    const Seconds dt = s_.latency_.step_time(batch_, gemm_terms_);
    // `!(x <= max)` also catches NaN and inf: neither may reach a request's times.
    if (!(dt >= 0) || !(now + dt <= limits::kMaxClockS)) [[unlikely]]
      throw InputError(fmt::format("simulation: step {} at {:.6g} s takes {} s, which puts the clock beyond the limit "
                                   "of {:g} s of simulated time (docs/limits.md); check the GPU profile's bandwidth "
                                   "and flops and the latency model",
                                   result_.steps, now, dt, limits::kMaxClockS));
    return dt;
  }

  // A request leaves: its record goes out, then its row and the scheduler's state for it go away.
  void emit(std::uint64_t id) {
    if (on_request_) on_request_(s_.record_of(s_.table_[id]));
    s_.scheduler_.release(id);
    s_.table_.drop(id);
  }

  // --check: the scheduler's and its KV manager's invariants after every call that changes them; the
  // allocator checks its own after each of its operations.
  void check() {
    if (s_.options_.check_invariants) [[unlikely]]
      s_.scheduler_.check_invariants();
  }

  ServingResult finish() {
    const alloc::AllocatorStats& st = s_.allocator_.stats();
    result_.peak_allocated = static_cast<Bytes>(st.allocated_bytes[alloc::kAll].peak);
    result_.peak_reserved = static_cast<Bytes>(st.reserved_bytes[alloc::kAll].peak);
    result_.counters = s_.scheduler_.counters();
    result_.preemptions = result_.counters.preemptions;
    result_.timeline = points_.take(s_.options_.max_timeline_points);
    return std::move(result_);
  }

  Server& s_;
  workload::RequestSource& source_;
  const std::function<void(const RequestRecord&)>& on_request_;
  const std::function<void(double)>& on_progress_;
  ServingResult result_;
  EventQueue queue_;
  workload::Request next_;  // the next arrival, read ahead
  bool have_next_ = false;
  StepPlan plan_;           // the running step's
  model::ProgramRun run_;
  latency::Batch batch_;
  latency::GemmTermCache gemm_terms_;  // the latency model's GEMM terms by the step's rows
  std::vector<std::uint64_t> finished_;
  StreamingDownsample<TimelinePoint, ReservedOf> points_;
  bool busy_ = false;       // a step is running
  bool graph_step_ = false; // the running step replays a CUDA graph
  alloc::Block* canary_;
  Bytes max_reserved_seen_ = 0;
  Bytes low_free_ = 0;      // cudaMemGetInfo's free at its lowest since the last timeline point
  Bytes low_free_or_cached_ = 0;  // and free + cached-but-free
};

ServingResult Server::run(workload::RequestSource& source, const std::function<void(const RequestRecord&)>& on_request,
                          const std::function<void(double)>& on_progress) {
  return Run(*this, source, on_request, on_progress).run();
}

}  // namespace headroom::engine
