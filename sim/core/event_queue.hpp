#pragma once
// The discrete-event core (SimPy's shape): a clock and a time-ordered queue of events. Ties at the
// same time are broken by insertion order, so a run is deterministic. Everything else (arrivals,
// steps) is a process that schedules events here. Events are plain values; the queue is a
// binary heap over a vector that keeps its capacity, so steady-state scheduling does not allocate.
#include <cstdint>
#include <vector>

#include "sim/core/units.hpp"

namespace headroom {

// The events the serving loop schedules (engine::Server, one handler each).
enum class EventKind : std::uint8_t {
  Arrival,  // a request arrives (payload: request id)
  StepEnd,  // the step's kernels finish (payload: step number)
};

struct Event {
  Seconds time = 0;
  EventKind kind = EventKind::Arrival;
  std::uint64_t payload = 0;
  std::uint64_t sequence = 0;  // insertion order: the tie-breaker
};

class EventQueue {
 public:
  Seconds now() const { return now_; }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  void reserve(std::size_t n) { heap_.reserve(n); }

  // Schedules an event at `time` (not before now()).
  void schedule(Seconds time, EventKind kind, std::uint64_t payload = 0);
  // The earliest event; the clock advances to its time.
  Event pop();
  const Event& top() const { return heap_.front(); }

 private:
  static bool later(const Event& a, const Event& b) {
    if (a.time != b.time) return a.time > b.time;
    return a.sequence > b.sequence;
  }
  std::vector<Event> heap_;
  std::uint64_t next_sequence_ = 0;
  Seconds now_ = 0;
};

}  // namespace headroom
