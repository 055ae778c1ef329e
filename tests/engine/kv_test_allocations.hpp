#pragma once
#include <cstddef>

// Calls to the global operator new of the engine test executable so far (kv_test_allocations.cpp).
std::size_t kv_test_allocations();
