#pragma once
// Runs independent jobs on a fixed number of threads (sweeps, comparisons, tunes: one simulation
// per core; each simulation stays single-threaded). Jobs are taken in index order; the first
// exception is rethrown after every thread has stopped.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace headroom {

// Threads to use: `requested`, or every hardware thread when 0.
inline unsigned worker_count(unsigned requested) {
  if (requested > 0) return requested;
  return std::max(1u, std::thread::hardware_concurrency());
}

template <class Job>
void parallel_for(std::size_t n, unsigned threads, Job&& job) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        job(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = n;  // stop handing out jobs
      }
    }
  };
  const auto count = static_cast<std::size_t>(std::min<std::size_t>(worker_count(threads), std::max<std::size_t>(n, 1)));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < count; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace headroom
