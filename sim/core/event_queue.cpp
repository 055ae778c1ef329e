#include "sim/core/event_queue.hpp"

#include <algorithm>
#include <stdexcept>

namespace headroom {

void EventQueue::schedule(Seconds time, EventKind kind, std::uint64_t payload) {
  if (time < now_) throw std::logic_error("event scheduled in the past");
  heap_.push_back(Event{time, kind, payload, next_sequence_++});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

Event EventQueue::pop() {
  std::pop_heap(heap_.begin(), heap_.end(), later);
  Event e = heap_.back();
  heap_.pop_back();
  now_ = e.time;
  return e;
}

}  // namespace headroom
