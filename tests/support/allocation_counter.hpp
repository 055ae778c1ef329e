#pragma once
// Calls to the global operator new of a test executable that links headroom_test_allocation_counter
// (tests/CMakeLists.txt): the engine, latency and model tests check that hot loops allocate nothing.
#include <cstddef>

namespace headroom::test {

std::size_t heap_allocations();

}  // namespace headroom::test
