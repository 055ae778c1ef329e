#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/rng.hpp"

using namespace headroom;

TEST_CASE("event queue: time order, ties in insertion order, the clock follows") {
  EventQueue q;
  q.schedule(2.0, EventKind::StepEnd, 1);
  q.schedule(1.0, EventKind::Arrival, 7);
  q.schedule(2.0, EventKind::Arrival, 8);
  q.schedule(1.0, EventKind::StepEnd, 9);
  std::vector<std::uint64_t> order;
  while (!q.empty()) {
    Event e = q.pop();
    CHECK(q.now() == e.time);
    order.push_back(e.payload);
  }
  CHECK(order == std::vector<std::uint64_t>{7, 9, 1, 8});
  CHECK_THROWS_AS(q.schedule(1.5, EventKind::Arrival), std::logic_error);  // before now()
}

TEST_CASE("event queue: random schedules pop sorted by (time, insertion)") {
  EventQueue q;
  Rng rng(3);
  for (int i = 0; i < 10000; ++i) q.schedule(static_cast<double>(rng.uniform_int(0, 100)), EventKind::Arrival, static_cast<std::uint64_t>(i));
  Event prev = q.pop();
  while (!q.empty()) {
    Event e = q.pop();
    CHECK((prev.time < e.time || (prev.time == e.time && prev.sequence < e.sequence)));
    prev = e;
  }
}
