// Counts calls to the global operator new of the test executables that link it (the engine, latency
// and model tests check that hot loops allocate nothing). One replacement per executable: a second
// is a duplicate-symbol link error. Not weak: under AddressSanitizer the runtime's own strong operator
// new would win over a weak one and the counter would see nothing. In a file of its own so that
// GCC 12 does not inline this operator delete into the tests' std::vector code, where it warns
// falsely that free() releases memory from operator new (-Wmismatched-new-delete).
#include <cstdlib>
#include <new>

#include "tests/support/allocation_counter.hpp"

namespace {
std::size_t g_allocations = 0;
}

std::size_t headroom::test::heap_allocations() { return g_allocations; }

void* operator new(std::size_t size) {
  ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
// The nothrow form too: Catch2 allocates its test registry with new(std::nothrow) and frees it with
// the operator delete above, so both must come from the same malloc (under AddressSanitizer, whose
// runtime supplies every operator new not replaced here, they would not: alloc-dealloc-mismatch).
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return ::operator new(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
