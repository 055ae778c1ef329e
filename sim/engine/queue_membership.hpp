#pragma once
// A scheduler invariant the SGLang and LightLLM schedulers share: how many times each request id
// stands in one of their queues, every id being a request the scheduler knows.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace headroom::engine {

// Counts per id in [begin, end), at index id − begin (the scheduler's live window of ids); throws
// std::logic_error("<scheduler>: unknown request <id> <state>") for an id that is out of range or
// not known.
template <class Queue, class IsKnown>
std::vector<int> queue_membership(const Queue& queue, std::uint64_t begin, std::uint64_t end, IsKnown&& is_known,
                                  std::string_view scheduler, std::string_view state) {
  std::vector<int> count(end - begin, 0);
  for (std::uint64_t id : queue) {
    if (id < begin || id >= end || !is_known(id))
      throw std::logic_error(fmt::format("{}: unknown request {} {}", scheduler, id, state));
    ++count[id - begin];
  }
  return count;
}

}  // namespace headroom::engine
