#pragma once
// The serving loop: requests arrive from a workload, the engine's scheduler builds each step, the
// step's allocation program runs through the caching-allocator model (decode batches within the
// captured sizes replay a CUDA graph: only the eager sampler allocates), the latency model advances
// the clock, and finished requests leave. An allocation failure is an OOM event with PyTorch's
// figures; by default the server dies there, as real ones do.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/allocator/caching_allocator.hpp"
#include "sim/core/event_queue.hpp"
#include "sim/engine/scheduler.hpp"
#include "sim/latency/step_latency.hpp"
#include "sim/model/eager_forward_program.hpp"
#include "sim/model/forward_program.hpp"
#include "sim/model/program_runner.hpp"
#include "sim/model/sampler_program.hpp"
#include "sim/workload/request_source.hpp"

namespace headroom::engine {

enum class OnOom { stop, continue_running };

struct ServingOptions {
  const model::ModelConfig* model = nullptr;
  int tp = 1;
  model::ForwardOptions forward;
  model::SamplerOptions sampler;
  // An eager path (StartupResult::eager): each step's program is built from its sequences' contexts
  // (eager_forward_program.hpp), not cached by shape.
  std::optional<model::EagerOptions> eager;
  // The captured graphs end with the fp32 logits (StartupResult::graph_computes_logits).
  bool graph_computes_logits = false;
  // Decode-only batches of at most this many sequences replay a captured CUDA graph (0: none).
  std::int64_t max_graph_batch = 0;
  OnOom on_oom = OnOom::stop;
  // Debugging (slow): the allocator's invariants after each of its operations, the scheduler's and
  // its KV manager's after every scheduler call (add_request, schedule, complete_step, drop_step).
  bool check_invariants = false;
  // A step whose program left the allocator as it found it (a closed run, alloc::ClosedRun) is
  // applied, not run again, the next time the same program starts from the same state: most steps
  // (model::RunMemo). Off: every step's program runs through the allocator; the outputs are the
  // same (tests/scenario/test_closed_runs.cpp), only slower.
  bool repeat_closed_runs = true;
  // A policy's canary held since start-up (runtime guard release_on_oom): freed at the first OOM
  // and the step run again, so the cached bytes it leaves serve the allocation. Null: none.
  alloc::Block* release_on_oom = nullptr;
  std::size_t max_timeline_points = 4000;
  // The timeline streams through this many buckets (StreamingDownsample): runs of fewer than
  // twice as many steps keep every step until the final down-sampling to max_timeline_points.
  std::size_t timeline_buckets = 32768;
};

// OOM events kept in ServingResult::ooms (the first ones); oom_count counts them all. With
// on_oom: continue a long trace can fail a step thousands of times; the report lists the first.
inline constexpr std::size_t kMaxOomEvents = 1000;

struct OomEvent {
  Seconds time_s = 0;
  std::uint64_t step = 0;
  Tokens tokens = 0;
  std::int64_t seqs = 0;
  std::string tensor;  // the allocation that failed: tensor name and layer
  alloc::OomInfo info;
};

// Memory and load at the end of a step.
struct TimelinePoint {
  Seconds time_s = 0;
  Bytes allocated = 0;          // torch-allocated now
  Bytes reserved = 0;           // torch-reserved now
  Bytes step_peak_allocated = 0;// the step's own peak (activations + sampler above the baseline)
  Bytes largest_free_block = 0;
  std::int64_t free_blocks = 0;
  Bytes device_free = 0;        // cudaMemGetInfo's free at its lowest since the previous point
  Bytes free_or_cached = 0;     // device free + torch's cached-but-free at their lowest since then
  Tokens kv_used_tokens = 0;
  std::int64_t running = 0;
  std::int64_t waiting = 0;
  std::int64_t arrived = 0;     // cumulative
  std::int64_t preemptions = 0; // cumulative
};

// The closest call of a replay: cudaMemGetInfo's free memory (what a cudaMalloc can still get; the
// bytes cached inside the allocator's segments are not counted) at its lowest while serving, exact:
// every malloc of every step is compared, not the down-sampled timeline. Starts from the state
// start-up left; `step` stays -1 when no step took memory from the device.
struct ClosestCall {
  Bytes min_free = 0;
  Bytes reserved = 0;           // torch-reserved then
  Seconds time_s = 0;           // the step's start
  std::int64_t step = -1;       // the step's index (as OomEvent::step)
  // The allocation that took free memory to its minimum: a tensor of the step's program.
  model::Tensor tensor = model::Tensor::hidden;
  std::int32_t layer = model::kNoLayer;
  Bytes bytes = 0;              // requested
  std::string allocation() const;  // "logits" or "qkv (layer 3)"; "" with step -1
};

struct RequestRecord {
  std::uint64_t id = 0;
  Seconds arrival_s = 0;
  Tokens prompt_tokens = 0;
  Tokens output_tokens = 0;
  Tokens cached_tokens = 0;
  int preemptions = 0;
  Seconds queue_s = -1;  // first scheduled (its first step, or prefill chunk, planned) minus arrival; -1 if never
  Seconds ttft_s = -1;   // first token minus arrival
  Seconds tpot_s = -1;   // (finish - first token) / (outputs - 1); -1 with a single output
  Seconds e2e_s = -1;
  bool aborted = false;
};

struct ServingResult {
  bool died = false;                  // stopped at an OOM (on_oom: stop)
  std::vector<OomEvent> ooms;         // the first kMaxOomEvents
  std::int64_t oom_count = 0;         // every OOM event
  std::int64_t arrived = 0;
  std::int64_t completed = 0;
  std::int64_t aborted = 0;           // given up on after they ran: dropped steps (on_oom: continue), SGLang's
                                      // last decode request that cannot fit
  std::int64_t rejected = 0;          // refused before they ran (longer than the engine accepts)
  std::int64_t steps = 0;
  std::int64_t graph_steps = 0;
  std::int64_t repeated_steps = 0;  // steps whose program run was a closed run applied again (model::RunMemo)
  std::int64_t preemptions = 0;
  Seconds end_time_s = 0;
  Tokens generated_tokens = 0;
  // The backlog when the workload's last request arrived (after the step planned then): requests in
  // the scheduler's waiting queue. With it the verdict decides whether the queue kept up with the
  // arrivals (report/verdict.hpp). Unset when the server died before the last arrival.
  std::optional<Seconds> last_arrival_s;
  std::int64_t waiting_at_last_arrival = 0;
  Bytes peak_allocated = 0, peak_reserved = 0;
  alloc::Fragmentation fragmentation_at_peak_reserved;
  ClosestCall closest_call;
  std::vector<TimelinePoint> timeline;  // down-sampled, min/max of reserved kept per bucket
  SchedulerCounters counters;
  std::int64_t allocator_mallocs = 0;
  std::optional<Seconds> canary_released_s;  // when release_on_oom freed the canary
  // The request table's widest live window: rows from the oldest unreported request to the newest
  // arrival (memory follows this, not the trace's length).
  std::int64_t peak_table_rows = 0;
};

class Server {
 public:
  Server(alloc::CachingAllocator& allocator, model::SlotTable& slots, const latency::StepLatencyModel& latency,
         Scheduler& scheduler, ServingOptions options);

  // Replays the workload to its end (or the first OOM with on_oom: stop). `on_request` sees every
  // finished or aborted request as it leaves (for a streaming requests.csv).
  ServingResult run(workload::RequestSource& source, const std::function<void(const RequestRecord&)>& on_request,
                    const std::function<void(double progress_s)>& on_progress = {});

 private:
  class Run;  // one replay: its state and a handler per event kind (server.cpp)

  // A step program and its last closed run (model::RunMemo): most steps repeat the run of a
  // program already run from the same allocator state.
  struct StepProgram {
    model::AllocationProgram program;
    model::RunMemo memo;
  };
  StepProgram& program_for(const StepPlan& plan, bool graph_replay);
  RequestRecord record_of(const RequestState& r) const;

  alloc::CachingAllocator& allocator_;
  model::SlotTable& slots_;
  const latency::StepLatencyModel& latency_;
  Scheduler& scheduler_;
  ServingOptions options_;
  // By request id, from the oldest request not yet reported to the newest arrival: a reported
  // request's row is dropped, so the table follows the requests in flight.
  RequestTable table_;
  // Step programs by (seqs, decode seqs, graph replay, tokens): shapes repeat, so a step rarely
  // builds one, and a new token count is refilled from a neighbour of the same seqs
  // (model::refill_step_program). Cleared when it grows past a bound, so memory stays flat on long
  // traces.
  std::map<std::tuple<std::int64_t, std::int64_t, bool, std::int64_t>, StepProgram> programs_;
  // The graph-replay programs of programs_ by seqs (a replayed decode batch of n seqs has one
  // shape), found without the map's search; reset with it. Sized at construction.
  struct GraphProgram {
    std::int64_t tokens = 0;
    StepProgram* program = nullptr;
  };
  std::vector<GraphProgram> graph_programs_;
  // The eager path's program of the current step and its sequences (capacity kept between steps).
  StepProgram eager_program_;
  std::vector<model::EagerSequence> eager_seqs_;
};

}  // namespace headroom::engine
