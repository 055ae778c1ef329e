#pragma once
// The progress line of a command that runs many simulations (compare, tune, sweep): points done of
// the total, the time elapsed and an estimate of what is left, rewritten in place on a terminal, and
// nothing at all when the stream is not one (piped or redirected: logs and pipes see only results).
// Thread-safe: the simulations finish on worker threads.
#include <cstddef>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>

namespace headroom {

// "4.2 s", "59 s", "1 min 05 s", "2 h 03 min".
std::string format_duration(double seconds);

// "  compare: 3/7 points, 12 s elapsed, about 16 s left". With no point done yet there is nothing to
// estimate from: "  compare: 0/7 points, 2.0 s elapsed". The estimate is the mean time per point so
// far times the points left.
std::string progress_line(std::string_view what, std::size_t done, std::size_t total, double elapsed_s);

class Progress {
 public:
  using Clock = std::function<double()>;  // seconds from any fixed point
  static double steady_seconds();

  // Draws on `out` only when `enabled`; see on_stderr() for a command's.
  Progress(std::ostream& out, bool enabled, std::string what, std::size_t total, Clock clock = steady_seconds);
  // stderr, enabled only when it is a terminal (isatty).
  static Progress on_stderr(std::string what, std::size_t total);
  ~Progress();  // finish()
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  Progress(Progress&&) = delete;

  bool enabled() const { return enabled_; }
  // More points than first thought (tune's bisection, known once its grid is done).
  void add_total(std::size_t more);
  void point_done();
  // Clears the line (once; later calls and the destructor do nothing).
  void finish();

 private:
  void draw();  // with mutex_ held

  std::ostream& out_;
  const bool enabled_;
  const std::string what_;
  Clock clock_;
  double start_s_;
  std::mutex mutex_;
  std::size_t done_ = 0, total_ = 0;
  std::size_t drawn_ = 0;  // characters on the line now
  bool finished_ = false;
};

}  // namespace headroom
