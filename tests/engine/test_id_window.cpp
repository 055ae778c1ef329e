// The live window of request ids: rows from the oldest id not yet dropped to the newest; dropping
// out of order leaves holes until the oldest goes; ids outside are errors; the ring is reused.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "sim/engine/id_window.hpp"

using headroom::engine::IdWindow;

TEST_CASE("id window: the front moves past dropped ids only when the oldest goes") {
  IdWindow<int> w(-1);
  for (int i = 0; i < 5; ++i) w.push_back(10 * i);
  CHECK(w.begin_id() == 0);
  CHECK(w.end_id() == 5);
  w.drop(1);
  w.drop(3);
  CHECK(w.size() == 5);  // 0 is live: the holes stay
  CHECK(w.dropped(1));
  CHECK_FALSE(w.dropped(2));
  w.drop(0);
  CHECK(w.begin_id() == 2);  // past 0 and the dropped 1
  CHECK(w.size() == 3);
  CHECK(w[2] == 20);
  CHECK_THROWS_AS(w[1], std::logic_error);
  CHECK_THROWS_AS(w.extend_to(0), std::logic_error);
  w.drop(7);  // an id past the window gets its row (the fill) and is dropped
  CHECK(w.end_id() == 8);
  CHECK(w[5] == -1);
  w.drop(2);
  w.drop(4);
  w.drop(5);
  w.drop(6);
  CHECK(w.empty());
  CHECK(w.begin_id() == 8);
  w.drop(3);  // already gone: nothing
  CHECK(w.empty());
}

TEST_CASE("id window: a million ids through a window of 100 never grow the ring past 128") {
  IdWindow<std::uint64_t> w;
  for (std::uint64_t id = 0; id < 1'000'000; ++id) {
    w.push_back(id);
    if (id >= 99) w.drop(id - 99);
    REQUIRE(w.size() <= 100);
  }
  CHECK(w.capacity() == 128);
  CHECK(w.peak_size() == 100);
  CHECK(w[999'999] == 999'999);
}
