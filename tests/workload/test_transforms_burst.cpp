// The burst transform: requests in the window come `factor` times at the same instant, renumbered
// densely, copies without prefix hashes; bad parameters are errors.
#include <catch2/catch.hpp>

#include <vector>

#include "sim/core/error.hpp"
#include "sim/workload/burst.hpp"
#include "tests/workload/test_files.hpp"

using namespace headroom;
using namespace headroom::workload;

using headroom::workload::test::ListSource;

TEST_CASE("burst: requests from at to at + duration (end excluded) come factor times") {
  std::vector<Request> rows;
  for (int i = 0; i < 5; ++i) {
    Request r;
    r.id = static_cast<std::uint64_t>(i);
    r.arrival_s = i * 10.0;
    r.input_tokens = 100 + i;
    r.output_tokens = 10;
    r.prefix_hashes = {1, 2};
    r.prefix_block_tokens = 512;
    rows.push_back(r);
  }
  Burst b(std::make_unique<ListSource>(rows), 10.0, 20.0, 3);  // arrivals 10 and 20 tripled
  std::vector<Request> out;
  Request r;
  while (b.next(r)) out.push_back(r);
  REQUIRE(out.size() == 9);
  for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i].id == i);
  CHECK(out[1].arrival_s == 10.0);
  CHECK(out[2].arrival_s == 10.0);
  CHECK(out[3].arrival_s == 10.0);
  CHECK(out[2].input_tokens == 101);
  CHECK(out[1].prefix_hashes.size() == 2);  // the original keeps its prefix
  CHECK(out[2].prefix_hashes.empty());      // copies are other users
  CHECK(out[7].arrival_s == 30.0);
  CHECK(b.stats().emitted == 9);
  CHECK_THROWS_AS(Burst(std::make_unique<ListSource>(rows), 0, 10, 1), InputError);
  CHECK_THROWS_AS(Burst(std::make_unique<ListSource>(rows), 0, 0, 2), InputError);
}
