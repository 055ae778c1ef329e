// The progress line of compare, tune and sweep: its wording and estimate under a fake clock, drawn
// in place on a terminal, and nothing at all on a stream that is not one.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sim/core/progress.hpp"

using namespace headroom;

TEST_CASE("durations read as seconds, minutes or hours") {
  CHECK(format_duration(0) == "0.0 s");
  CHECK(format_duration(4.25) == "4.2 s");
  CHECK(format_duration(59.4) == "59 s");
  CHECK(format_duration(65) == "1 min 05 s");
  CHECK(format_duration(3599) == "59 min 59 s");
  CHECK(format_duration(7380) == "2 h 03 min");
  CHECK(format_duration(-1) == "0.0 s");
}

TEST_CASE("the progress line: points done of the total, elapsed, and the mean time per point times those left") {
  CHECK(progress_line("compare", 0, 7, 2) == "  compare: 0/7 points, 2.0 s elapsed");
  // 3 points in 12 s: 4 s each, 4 left.
  CHECK(progress_line("compare", 3, 7, 12) == "  compare: 3/7 points, 12 s elapsed, about 16 s left");
  CHECK(progress_line("tune", 30, 33, 300) == "  tune: 30/33 points, 5 min 00 s elapsed, about 30 s left");
  CHECK(progress_line("tune", 33, 33, 330) == "  tune: 33/33 points, 5 min 30 s elapsed");
}

TEST_CASE("on a terminal the line is redrawn in place and cleared at the end") {
  std::ostringstream out;
  double now = 100;
  {
    Progress p(out, true, "compare", 2, [&] { return now; });
    CHECK(out.str() == "\r  compare: 0/2 points, 0.0 s elapsed");
    out.str("");
    now = 112;
    p.point_done();
    CHECK(out.str() == "\r  compare: 1/2 points, 12 s elapsed, about 12 s left");
    out.str("");
    p.add_total(1);  // tune's bisection, once its grid is done
    CHECK(out.str() == "\r  compare: 1/3 points, 12 s elapsed, about 24 s left");
    out.str("");
    now = 113;
    p.point_done();
    const std::string before = "  compare: 2/3 points, 13 s elapsed, about 6.5 s left";
    CHECK(out.str() == "\r" + before);
    out.str("");
    p.point_done();
    p.point_done();  // beyond an estimated total: the total follows
    // Shorter than the line before: spaces clear the rest.
    const std::string last = "  compare: 4/4 points, 13 s elapsed";
    CHECK(out.str() == "\r  compare: 3/3 points, 13 s elapsed" + std::string(before.size() - last.size(), ' ') +
                           "\r" + last);
    out.str("");
  }
  // The destructor clears the last line and leaves the cursor at its start.
  CHECK(out.str() == "\r" + std::string(std::string("  compare: 4/4 points, 13 s elapsed").size(), ' ') + "\r");
}

TEST_CASE("not a terminal: nothing is written, whatever happens") {
  std::ostringstream out;
  {
    Progress p(out, false, "compare", 8);
    CHECK_FALSE(p.enabled());
    std::vector<std::thread> workers;
    for (int t = 0; t < 4; ++t)
      workers.emplace_back([&] {
        for (int i = 0; i < 2; ++i) p.point_done();
      });
    for (auto& w : workers) w.join();
    p.add_total(3);
    p.finish();
  }
  CHECK(out.str().empty());
}
