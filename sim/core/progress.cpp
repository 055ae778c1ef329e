#include "sim/core/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>

#include <fmt/format.h>

namespace headroom {

std::string format_duration(double seconds) {
  if (!(seconds >= 0)) seconds = 0;
  if (seconds < 10) return fmt::format("{:.1f} s", seconds);
  const auto s = static_cast<long long>(std::llround(seconds));
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {:02} s", s / 60, s % 60);
  return fmt::format("{} h {:02} min", s / 3600, (s % 3600) / 60);
}

std::string progress_line(std::string_view what, std::size_t done, std::size_t total, double elapsed_s) {
  std::string line = fmt::format("  {}: {}/{} points, {} elapsed", what, done, total, format_duration(elapsed_s));
  if (done > 0 && done < total)
    line += fmt::format(", about {} left",
                        format_duration(elapsed_s / static_cast<double>(done) * static_cast<double>(total - done)));
  return line;
}

double Progress::steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Progress::Progress(std::ostream& out, bool enabled, std::string what, std::size_t total, Clock clock)
    : out_(out), enabled_(enabled), what_(std::move(what)), clock_(std::move(clock)), start_s_(clock_()), total_(total) {
  std::lock_guard<std::mutex> lock(mutex_);
  draw();
}

Progress Progress::on_stderr(std::string what, std::size_t total) {
  return Progress(std::cerr, ::isatty(STDERR_FILENO) == 1, std::move(what), total);
}

Progress::~Progress() { finish(); }

void Progress::add_total(std::size_t more) {
  std::lock_guard<std::mutex> lock(mutex_);
  total_ += more;
  draw();
}

void Progress::point_done() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
  total_ = std::max(total_, done_);  // an estimated total never reads "8/7"
  draw();
}

void Progress::draw() {
  if (!enabled_ || finished_ || total_ == 0) return;  // tune's total comes once its grid is laid out
  const std::string line = progress_line(what_, done_, total_, clock_() - start_s_);
  // Over the previous line in place; spaces clear what a longer one left.
  out_ << '\r' << line << std::string(drawn_ > line.size() ? drawn_ - line.size() : 0, ' ') << std::flush;
  drawn_ = line.size();
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  finished_ = true;
  if (enabled_ && drawn_ > 0) out_ << '\r' << std::string(drawn_, ' ') << '\r' << std::flush;
}

}  // namespace headroom
