// Known-answer tests: each rule of docs/allocator-model.md, with the figures the
// spec (and PyTorch's test/test_cuda.py, its §7 table) gives.
#include <catch2/catch.hpp>

#include "sim/allocator/caching_allocator.hpp"
#include "sim/allocator/size_rules.hpp"
#include "sim/core/error.hpp"

using namespace headroom;
using namespace headroom::alloc;

namespace {

struct Gpu {
  explicit Gpu(Bytes total = 80 * GiB, const std::string& conf = "")
      : dev(device::DeviceSpec{.name = "test", .total = total}), a(dev, parse_alloc_conf(conf)) {}
  device::Device dev;
  CachingAllocator a;
  const AllocatorStats& s() const { return a.stats(); }
};

std::int64_t seg(const Gpu& g, int pool) { return g.s().segment[pool].current; }
std::int64_t reserved(const Gpu& g, int pool = kAll) { return g.s().reserved_bytes[pool].current; }

// The 5x (b = b.clone() + 1) loop of test_graph_memory_stats_and_use_result_after_destroy_graph:
// a clone, a result, then the previous b and the clone die.
Block* clone_loop(CachingAllocator& a, Bytes n, StreamId stream) {
  Block* b = a.malloc(n, stream);
  for (int i = 0; i < 5; ++i) {
    Block* t = a.malloc(n, stream);
    Block* r = a.malloc(n, stream);
    a.free(t);
    a.free(b);
    b = r;
  }
  return b;
}

}  // namespace

TEST_CASE("round_size: 512-byte minimum and granularity (spec §1)") {
  AllocatorConfig c;
  CHECK(round_size(1, c) == 512);
  CHECK(round_size(511, c) == 512);
  CHECK(round_size(512, c) == 512);
  CHECK(round_size(513, c) == 1024);
  CHECK(round_size(88'080'384, c) == 88'080'384);
}

TEST_CASE("round_size: roundup_power2_divisions (spec §1 example and §7 rows 5, 7, 8)") {
  AllocatorConfig d4 = parse_alloc_conf("roundup_power2_divisions:4");
  CHECK(round_size(88'080'384, d4) == 100'663'296);   // 84 MiB -> 96 MiB
  CHECK(round_size(64 * MiB, d4) == 64 * MiB);         // a power of two stays
  CHECK(round_size(2048, d4) == 2048);                 // n <= 512 x D: plain 512 rounding
  CHECK(round_size(2049, d4) == 2560);
  AllocatorConfig list = parse_alloc_conf("roundup_power2_divisions:[64:8,128:2,256:2,512:2,1024:1,>:1]");
  CHECK(round_size(88'080'384, list) == 92'274'688);   // 84 MiB -> 88 MiB
  CHECK(round_size(419'430'400, list) == 536'870'912); // 400 MiB -> 512 MiB
  // The first key also fills every lower interval: a 1.5 MiB request uses 8 divisions.
  CHECK(list.divisions_for(1536 * KiB) == 8);
  CHECK(list.divisions_for(40 * GiB) == 1);  // '>' fills every index after the last key
}

TEST_CASE("pool choice and segment sizes (spec §1)") {
  AllocatorConfig c;
  CHECK(is_small_request(1 * MiB));
  CHECK_FALSE(is_small_request(1 * MiB + 512));
  CHECK(segment_size_for(512, c) == 2 * MiB);
  CHECK(segment_size_for(1 * MiB, c) == 2 * MiB);
  CHECK(segment_size_for(1 * MiB + 512, c) == 20 * MiB);
  CHECK(segment_size_for(10 * MiB - 512, c) == 20 * MiB);
  CHECK(segment_size_for(10 * MiB, c) == 10 * MiB);
  CHECK(segment_size_for(10 * MiB + 512, c) == 12 * MiB);
  CHECK(segment_size_for(99 * MiB, c) == 100 * MiB);
  CHECK(segment_size_for(4 * MiB, parse_alloc_conf("large_segment_size_mb:64")) == 64 * MiB);
}

TEST_CASE("§7 row 1: 1 KiB alloc moves active_bytes by 1024, freed counts 1024") {
  Gpu g;
  g.a.empty_cache();
  g.a.reset_accumulated_stats();
  Block* b = g.a.malloc(1024);
  CHECK(g.s().active_bytes[kAll].current == 1024);
  g.a.free(b);
  g.a.empty_cache();
  CHECK(g.s().active_bytes[kAll].current == 0);
  CHECK(g.s().active_bytes[kAll].freed == 1024);
  CHECK(g.s().reserved_bytes[kAll].current == 0);
}

TEST_CASE("§7 row 2: a 1-byte allocation occupies 512 bytes") {
  Gpu g;
  Block* b = g.a.malloc(1);
  CHECK(g.a.allocated_bytes() == 512);
  CHECK(g.s().requested_bytes[kAll].current == 1);
  g.a.free(b);
  CHECK(g.a.allocated_bytes() == 0);
}

TEST_CASE("§7 row 3: requested_bytes counts the unrounded 1 MiB request") {
  Gpu g;
  Block* b = g.a.malloc(1 * MiB);
  CHECK(g.s().requested_bytes[kAll].allocated == 1'048'576);
  CHECK(g.s().requested_bytes[kSmallPool].allocated == 1'048'576);
  g.a.free(b);
}

TEST_CASE("§7 rows 4-8: active_bytes after allocator settings") {
  struct Row {
    const char* conf;
    Bytes n, expect;
  } rows[] = {
      {"", 88'080'384, 88'080'384},
      {"roundup_power2_divisions:4", 88'080'384, 100'663'296},
      {"garbage_collection_threshold:0.5,max_split_size_mb:40", 88'080'384, 88'080'384},
      {"roundup_power2_divisions:[64:8,128:2,256:2,512:2,1024:1,>:1]", 88'080'384, 92'274'688},
      {"roundup_power2_divisions:[64:8,128:2,256:2,512:2,1024:1,>:1]", 419'430'400, 536'870'912},
  };
  for (const Row& r : rows) {
    Gpu g(80 * GiB, r.conf);
    Block* b = g.a.malloc(r.n);
    INFO(r.conf);
    CHECK(g.s().active_bytes[kAll].allocated == static_cast<std::int64_t>(r.expect));
    CHECK(g.s().requested_bytes[kAll].allocated == static_cast<std::int64_t>(r.n));
    g.a.free(b);
  }
}

TEST_CASE("split rules: small remainder >= 512, large remainder > 1 MiB (spec §1)") {
  Gpu g;
  // Small pool: a 2 MiB segment; 1.5 MiB... is large; use 1 MiB - 512 then 1 MiB: remainder 512 splits.
  Block* s1 = g.a.malloc(1 * MiB);
  Block* s2 = g.a.malloc(1 * MiB - 512);
  CHECK(s2->ptr == s1->ptr + 1 * MiB);
  CHECK(s2->size == 1 * MiB - 512);  // remainder 512 >= 512: split
  CHECK(seg(g, kSmallPool) == 1);
  Block* s3 = g.a.malloc(512);
  CHECK(s3->ptr == s2->ptr + s2->size);  // the 512-byte tail
  CHECK(seg(g, kSmallPool) == 1);
  // Large pool: a 20 MiB segment; a request leaving exactly 1 MiB is not split.
  Block* l1 = g.a.malloc(19 * MiB);
  CHECK(l1->size == 20 * MiB);           // r = 1 MiB, not > 1 MiB: whole block handed out
  CHECK(g.a.allocated_bytes() == 2 * MiB + 20 * MiB);
  Block* l2 = g.a.malloc(3 * MiB);       // new 20 MiB segment, r = 17 MiB > 1 MiB: split
  CHECK(l2->size == 3 * MiB);
  CHECK(g.s().inactive_split[kLargePool].current == 1);
  CHECK(g.s().inactive_split_bytes[kLargePool].current == static_cast<std::int64_t>(17 * MiB));
  // "a 10 MiB-512 request can occupy 10 MiB+512 bytes" (spec §1).
  Gpu h;
  Block* x = h.a.malloc(10 * MiB - 512);
  Block* y = h.a.malloc(10 * MiB - 512);
  CHECK(x->size == 10 * MiB - 512);
  CHECK(y->size == 10 * MiB + 512);
  CHECK(h.a.allocated_bytes() == 20 * MiB);
  for (Block* b : {s1, s2, s3, l1, l2}) g.a.free(b);
  g.a.check_invariants();
}

TEST_CASE("best fit: smallest block of the same stream, ties to the lowest address (spec §2)") {
  Gpu g;
  // One 20 MiB segment cut into 5 + 3 + 4 + 3 + 5 MiB (the last takes the exact remainder).
  Block* p1 = g.a.malloc(5 * MiB);
  Block* p2 = g.a.malloc(3 * MiB);
  Block* p3 = g.a.malloc(4 * MiB);
  Block* p4 = g.a.malloc(3 * MiB);
  Block* p5 = g.a.malloc(5 * MiB);
  REQUIRE(p5->ptr == p1->ptr + 15 * MiB);
  REQUIRE(g.s().segment[kLargePool].current == 1);
  const Address hole3 = p4->ptr;  // (a freed block's handle may be reused: keep addresses)
  g.a.free(p1);  // a 5 MiB hole at the lowest address
  g.a.free(p4);  // a 3 MiB hole higher up
  Block* r = g.a.malloc(2 * MiB + 512 * KiB);
  CHECK(r->ptr == hole3);  // the smallest fit wins over the lower address
  CHECK(r->size == 3 * MiB);           // remainder 0.5 MiB is not > 1 MiB: no split
  // Ties: two equal 512 KiB holes in a small segment; the lower address wins.
  Block* s1 = g.a.malloc(512 * KiB);
  Block* s2 = g.a.malloc(512 * KiB);
  Block* s3 = g.a.malloc(512 * KiB);
  Block* s4 = g.a.malloc(512 * KiB);
  const Address first = s1->ptr;
  g.a.free(s3);
  g.a.free(s1);
  Block* t = g.a.malloc(100 * KiB);
  CHECK(t->ptr == first);
  // Another stream never reuses them: a new segment.
  std::int64_t before = g.s().segment[kSmallPool].current;
  Block* other = g.a.malloc(100 * KiB, /*stream=*/7);
  CHECK(g.s().segment[kSmallPool].current == before + 1);
  for (Block* b : {p2, p3, p5, r, s2, s4, t, other}) g.a.free(b);
  g.a.check_invariants();
}

TEST_CASE("fragmentation: the largest free block over several streams and both pools") {
  // Free sets are ordered (stream, size, address): the largest block of a middle stream must be
  // found, not only the last block of the set.
  Gpu g;
  Block* s0 = g.a.malloc(30 * MiB, 0);  // whole 30 MiB segments (>= 10 MiB requests round to 2 MiB)
  Block* s1 = g.a.malloc(50 * MiB, 1);
  Block* s2 = g.a.malloc(12 * MiB, 2);
  Block* small = g.a.malloc(4 * KiB, 3);
  CHECK(g.a.fragmentation().largest_free_block == 2 * MiB - 4 * KiB);  // the small segment's tail
  for (Block* b : {s0, s1, s2, small}) g.a.free(b);
  const Fragmentation fr = g.a.fragmentation();
  CHECK(fr.largest_free_block == 50 * MiB);  // stream 1, between streams 0 and 2
  CHECK(fr.free_blocks == 4);
  g.a.check_invariants();
}

TEST_CASE("empty_cache releases free segments in (stream, size, address) order, streams met out of order") {
  // PyTorch's release_blocks (c10/cuda/CUDACachingAllocator.cpp) walks the pool's set in
  // BlockComparatorSize order (stream, then size, then address): the history's segment_free events
  // come out in that order, whatever order the streams were first used in.
  Gpu g;
  g.a.record_history(true);
  Block* s5 = g.a.malloc(30 * MiB, 5);
  Block* s1_big = g.a.malloc(40 * MiB, 1);
  Block* s3 = g.a.malloc(12 * MiB, 3);
  Block* s1_small = g.a.malloc(24 * MiB, 1);
  for (Block* b : {s3, s1_big, s5, s1_small}) g.a.free(b);
  g.a.check_invariants();
  // Best fit stays within the stream: stream 3 holds only 12 MiB, stream 1 a 24 MiB segment.
  CHECK_FALSE(g.a.would_reuse_cached_block(20 * MiB, 3));
  CHECK(g.a.would_reuse_cached_block(20 * MiB, 1));  // stream 1's 24 MiB segment
  g.a.empty_cache();
  std::vector<std::pair<StreamId, Bytes>> released;
  for (const TraceEvent& e : g.a.history())
    if (e.action == TraceAction::SegmentFree) released.emplace_back(e.stream, e.size);
  const std::vector<std::pair<StreamId, Bytes>> expected = {
      {1, 24 * MiB}, {1, 40 * MiB}, {3, 12 * MiB}, {5, 30 * MiB}};
  CHECK(released == expected);
  CHECK(g.a.reserved_bytes() == 0);
  g.a.check_invariants();
}

TEST_CASE("coalescing: a freed block merges with free neighbours (spec §1)") {
  Gpu g;
  Block* a = g.a.malloc(4 * MiB);
  Block* b = g.a.malloc(4 * MiB);
  Block* c = g.a.malloc(4 * MiB);
  CHECK(g.s().inactive_split[kLargePool].current == 1);  // the 8 MiB tail
  g.a.free(a);
  g.a.free(c);  // merges with the tail
  CHECK(g.s().inactive_split[kLargePool].current == 2);
  CHECK(g.a.fragmentation().largest_free_block == 12 * MiB);
  g.a.free(b);  // merges both sides: one whole 20 MiB block
  CHECK(g.s().inactive_split[kLargePool].current == 0);
  CHECK(g.a.fragmentation().largest_free_block == 20 * MiB);
  CHECK(g.a.fragmentation().free_blocks == 1);
  g.a.empty_cache();
  CHECK(reserved(g) == 0);
  g.a.check_invariants();
}

TEST_CASE("max_split_size: oversize blocks are never split and reused only within 20 MiB (spec §1)") {
  Gpu g(80 * GiB, "max_split_size_mb:40");
  Block* big = g.a.malloc(100 * MiB);
  g.a.free(big);
  Block* small_req = g.a.malloc(30 * MiB);  // < max_split: never takes an oversize block
  CHECK(small_req->ptr != big->ptr);
  CHECK(seg(g, kLargePool) == 2);
  Block* fits = g.a.malloc(81 * MiB);  // 100 < 81 + 20: reuses the cached 100 MiB block whole
  CHECK(fits->size == 100 * MiB);
  CHECK(g.a.allocated_bytes() == 130 * MiB);
  g.a.free(fits);
  Block* too_small = g.a.malloc(80 * MiB);  // 100 >= 80 + 20: no reuse, a new segment
  CHECK(too_small->size == 80 * MiB);
  CHECK(seg(g, kLargePool) == 3);
  CHECK(g.s().oversize_segments.current == 2);
  CHECK(g.s().oversize_allocations.current == 1);
  CHECK(g.s().max_split_size == static_cast<std::int64_t>(40 * MiB));
  for (Block* b : {small_req, too_small}) g.a.free(b);
  g.a.check_invariants();
}

TEST_CASE("§7 rows 10-14: graph capture into a private pool") {
  struct Row {
    Bytes n;
    std::int64_t segs_small, segs_large;
    Bytes reserved_delta;
    std::int64_t after_segs;
    Bytes after_reserved;
  } rows[] = {
      {512, 1, 0, 2 * MiB, 1, 2 * MiB},
      {1 * MiB, 2, 0, 4 * MiB, 1, 2 * MiB},
      {1 * MiB + 512, 0, 1, 20 * MiB, 1, 20 * MiB},
      {10 * MiB - 512, 0, 2, 40 * MiB, 1, 20 * MiB},
      {10 * MiB + 512, 0, 3, 36 * MiB, 1, 12 * MiB},
  };
  for (const Row& r : rows) {
    INFO("a = " << r.n << " bytes");
    Gpu g;
    Block* a = g.a.malloc(r.n);  // the input, outside the pool
    // The process already has a small segment (earlier small tensors), where the capture's RNG
    // state holders land.
    Block* earlier = g.a.malloc(4096);
    std::int64_t small0 = seg(g, kSmallPool), large0 = seg(g, kLargePool);
    std::int64_t res0 = reserved(g);
    const PoolId pool{1, 0};
    const StreamId capture_stream = 0x51;
    Block* rng1 = g.a.malloc(512);  // RNG state holders are allocated outside the pool
    Block* rng2 = g.a.malloc(512);
    g.a.begin_allocate_to_pool(pool, capture_stream);
    Block* b = clone_loop(g.a, r.n, capture_stream);
    g.a.end_allocate_to_pool(pool);
    CHECK(seg(g, kSmallPool) - small0 == r.segs_small);
    CHECK(seg(g, kLargePool) - large0 == r.segs_large);
    CHECK(reserved(g) - res0 == static_cast<std::int64_t>(r.reserved_delta));
    // Ordinary allocations never use private-pool blocks.
    Block* outside = g.a.malloc(r.n);
    CHECK(outside->pool->owner_private_pool == nullptr);
    g.a.free(outside);
    // del graph + empty_cache, with b still alive: only b's segment survives in the pool.
    g.a.release_pool(pool);
    g.a.free(rng1);
    g.a.free(rng2);
    g.a.empty_cache();
    CHECK(g.a.private_pool_reserved_bytes() == r.after_reserved);
    CHECK(seg(g, kAll) - (r.n <= 1 * MiB ? 1 : 2) == r.after_segs);  // minus a's and the small segment
    g.a.free(b);
    g.a.free(a);
    g.a.free(earlier);
    g.a.empty_cache();
    CHECK(reserved(g) == 0);  // the pool was deleted once it owned no segments
    g.a.check_invariants();
  }
}

TEST_CASE("§7 row 14 with expandable segments: no segment count change, 40 MiB mapped") {
  Gpu g(80 * GiB, "expandable_segments:True");
  const PoolId pool{1, 0};
  g.a.begin_allocate_to_pool(pool, 0x51);
  std::int64_t segs0 = seg(g, kAll);
  Block* b = clone_loop(g.a, 10 * MiB + 512, 0x51);
  g.a.end_allocate_to_pool(pool);
  CHECK(seg(g, kAll) == segs0);             // mapping pages never counts a segment
  CHECK(reserved(g) == static_cast<std::int64_t>(40 * MiB));  // 2 large pages
  g.a.free(b);
  g.a.release_pool(pool);
  g.a.empty_cache();
  CHECK(reserved(g) == 0);
  g.a.check_invariants();
}

TEST_CASE("§7 row 16: memory fraction caps segment creation") {
  Gpu g(80 * GiB);
  g.dev.set_per_process_memory_fraction(0.5);
  Bytes total = g.dev.total();
  Block* first = g.a.malloc(static_cast<Bytes>(0.499 * static_cast<double>(total)));
  REQUIRE(first != nullptr);
  g.a.free(first);
  g.a.empty_cache();
  // floor(0.5 x total) is exactly allowed; one more 2 MiB segment granule is not.
  Block* second = g.a.malloc(total / 2);
  REQUIRE(second != nullptr);
  g.a.free(second);
  g.a.empty_cache();
  Block* over = g.a.malloc(total / 2 + 2 * MiB);
  CHECK(over == nullptr);
  REQUIRE(g.a.last_oom().has_value());
  CHECK(g.a.last_oom()->allowed == total / 2);
  CHECK_THAT(g.a.last_oom()->message(), Catch::Contains("40.00 GiB allowed; "));
  CHECK_THROWS_AS(g.dev.set_per_process_memory_fraction(1.5), InputError);
}

TEST_CASE("§7 row 17: OOM, then a freed block is reused by the retry") {
  Gpu g(80 * GiB);
  g.dev.set_context_bytes(1 * GiB);  // what the CUDA context holds: two halves no longer fit
  Bytes half = g.dev.total() / 2;
  Block* x = g.a.malloc(half);
  REQUIRE(x);
  Block* y = g.a.malloc(half);
  CHECK(y == nullptr);
  g.a.free(x);
  Block* z = g.a.malloc(half);
  REQUIRE(z);
  CHECK(z->ptr == x->ptr);  // the cached block, no new segment
  CHECK(g.s().num_ooms == 1);
  CHECK(g.s().num_alloc_retries == 1);
  g.a.free(z);
}

TEST_CASE("§7 row 18 and the OOM message (spec §3 step 9)") {
  Gpu g(80 * GiB);
  g.dev.set_context_bytes(500 * MiB);
  Block* keep = g.a.malloc(70 * GiB);
  REQUIRE(keep);
  Block* hole = g.a.malloc(4 * MiB);  // a 20 MiB segment with 16 MiB free
  REQUIRE(hole);
  Block* fail = g.a.malloc(800'000'000ull * GiB);  // below 1 EB: an ordinary OOM
  CHECK(fail == nullptr);
  const OomInfo& o = *g.a.last_oom();
  CHECK(o.total == 80 * GiB);
  CHECK(o.allocated == 70 * GiB + 4 * MiB);
  CHECK(o.reserved == 70 * GiB + 20 * MiB);
  CHECK(o.free == 80 * GiB - 500 * MiB - 70 * GiB - 20 * MiB);
  std::string m = o.message();
  CHECK_THAT(m, Catch::StartsWith("CUDA out of memory. Tried to allocate 800000000.00 GiB. GPU 0 has a total capacity of "
                                  "80.00 GiB of which 9.49 GiB is free. Including non-PyTorch memory, this process "
                                  "has 70.51 GiB memory in use. Of the allocated memory 70.00 GiB is allocated by "
                                  "PyTorch, and 16.00 MiB is reserved by PyTorch but unallocated. If reserved but "
                                  "unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"));
  // "Tried to allocate" prints the segment size, not the request (spec §3 step 9).
  Gpu tiny(30 * MiB);
  Block* fill = tiny.a.malloc(20 * MiB);
  Block* four_mib = tiny.a.malloc(4 * MiB);
  CHECK(fill);
  CHECK(four_mib == nullptr);
  CHECK_THAT(tiny.a.last_oom()->message(), Catch::StartsWith("CUDA out of memory. Tried to allocate 20.00 MiB."));
  CHECK(tiny.a.last_oom()->rounded == 4 * MiB);
  // >= 2^60 bytes fails up front.
  Block* eb = g.a.malloc(8'000'000'000ull * GiB);
  CHECK(eb == nullptr);
  CHECK(g.a.last_oom()->message() == "CUDA out of memory. Tried to allocate more than 1EB memory.");
  CHECK(g.a.last_oom()->message(true) == "HIP out of memory. Tried to allocate more than 1EB memory.");
  g.a.free(keep);
  g.a.free(hole);
}

TEST_CASE("§7 row 19: release_available_cached_blocks then release_cached_blocks (max_split + expandable)") {
  Gpu g(240 * MiB, "max_split_size_mb:40");
  g.dev.set_per_process_memory_fraction(0.5);  // a 120 MiB budget
  Block* a = g.a.malloc(40 * MiB);
  g.a.set_config(parse_alloc_conf("max_split_size_mb:40,expandable_segments:True"));
  Block* b = g.a.malloc(40 * MiB);
  g.a.set_config(parse_alloc_conf("max_split_size_mb:40"));
  Block* c = g.a.malloc(40 * MiB);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(c);
  CHECK(g.a.malloc(40 * MiB) == nullptr);  // d: the 120 MiB budget is spent
  g.a.free(a);
  g.a.free(b);
  g.a.free(c);
  Block* big = g.a.malloc(120 * MiB);  // step 7 frees a and c (80 < 120), step 8 unmaps b
  REQUIRE(big);
  CHECK(g.s().num_alloc_retries == 2);  // d's failed retry, then this one
  CHECK(reserved(g) == static_cast<std::int64_t>(120 * MiB));
  g.a.free(big);
  g.a.check_invariants();
}

TEST_CASE("§7 row 20: garbage collection with expandable blocks") {
  Gpu g(240 * MiB, "garbage_collection_threshold:0.5");
  g.dev.set_per_process_memory_fraction(0.5);  // a 120 MiB budget
  Block* a = g.a.malloc(40 * MiB);
  g.a.set_config(parse_alloc_conf("garbage_collection_threshold:0.5,expandable_segments:True"));
  Block* b = g.a.malloc(40 * MiB);
  g.a.set_config(parse_alloc_conf("garbage_collection_threshold:0.5"));
  g.a.free(a);
  g.a.free(b);
  Block* c = g.a.malloc(80 * MiB);
  CHECK(c != nullptr);
  if (c) g.a.free(c);
  g.a.check_invariants();
}

TEST_CASE("garbage collection frees cached blocks at least as old as the mean (spec §3 step 4)") {
  Gpu g(1 * GiB, "garbage_collection_threshold:0.5");
  g.dev.set_per_process_memory_fraction(25.0 / 32.0);  // allowed 800 MiB: the GC limit is 400 MiB
  Block* old1 = g.a.malloc(200 * MiB);  // each search of the large pool ages its cached blocks
  Block* old2 = g.a.malloc(200 * MiB);
  g.a.free(old1);
  g.a.free(old2);
  Block* mid = g.a.malloc(250 * MiB);  // miss; reserved 400 <= limit: no GC; a new segment
  g.a.free(mid);
  CHECK(reserved(g) == static_cast<std::int64_t>(650 * MiB));
  std::int64_t frees0 = g.s().num_device_free;
  Block* need = g.a.malloc(300 * MiB);  // miss: target 250 MiB; ages 2, 2, 1 (mean 1.67) -> both 200s go
  REQUIRE(need);
  CHECK(g.s().num_device_free - frees0 == 2);
  CHECK(reserved(g) == static_cast<std::int64_t>(550 * MiB));  // the younger 250 MiB block stays cached
  g.a.free(need);
  g.a.check_invariants();
}

TEST_CASE("§7 rows 21-22: record_stream defers reuse until the other stream is synchronized") {
  Gpu g;
  const StreamId s = 3, main = 0;
  Block* tmp = g.a.malloc(1 * MiB, s);
  g.a.record_stream(tmp, main);
  Address p = tmp->ptr;
  g.a.free(tmp);
  CHECK(g.s().active_bytes[kAll].current == static_cast<std::int64_t>(1 * MiB));  // pending
  CHECK(g.a.allocated_bytes() == 0);
  Block* again = g.a.malloc(1 * MiB, s);
  CHECK(again->ptr != p);
  g.a.free(again);
  g.a.synchronize();
  Block* after = g.a.malloc(1 * MiB, s);
  CHECK(after->ptr == p);
  g.a.free(after);
  // Row 21: pending frees never cause an OOM: the retry step syncs them.
  Gpu h(400 * MiB);
  for (int i = 0; i < 100; ++i) {
    Block* x = h.a.malloc(160 * MiB);
    REQUIRE(x);
    h.a.record_stream(x, 9);
    h.a.free(x);
  }
  CHECK(h.s().num_ooms == 0);
  CHECK(h.s().num_sync_all_streams > 0);
  h.a.check_invariants();
}

TEST_CASE("§7 row 23 and 24: snapshot block addresses, a 4 TiB request OOMs") {
  Gpu g;
  g.a.record_history(true);
  g.a.empty_cache();
  Block* t1 = g.a.malloc(2 * 311 * 411 * 4);
  Block* t2 = g.a.malloc(310 * 410 * 4);
  Block* x = g.a.malloc(311 * 411 * 4);
  Snapshot snap = g.a.snapshot();
  bool found = false;
  for (const auto& s : snap.segments)
    for (const auto& b : s.blocks)
      if (b.requested_size == 511'284 && b.state == BlockState::ActiveAllocated) found = b.address == x->ptr;
  CHECK(found);
  for (Block* b : {t1, t2, x}) g.a.free(b);
  g.a.empty_cache();
  auto h = g.a.history();
  REQUIRE_FALSE(h.empty());
  CHECK((h.back().action == TraceAction::SegmentFree || h.back().action == TraceAction::SegmentUnmap));
  CHECK(g.a.malloc(4096 * GiB) == nullptr);
  Gpu m(80 * GiB, "max_split_size_mb:1024");
  CHECK(m.a.malloc(4096 * GiB) == nullptr);
  CHECK(m.s().num_ooms == 1);
}

TEST_CASE("expandable segments: growth maps pages, frees never unmap, empty_cache unmaps free pages") {
  Gpu g(80 * GiB, "expandable_segments:True");
  Block* a = g.a.malloc(30 * MiB);  // maps 2 large pages (40 MiB)
  CHECK(reserved(g) == static_cast<std::int64_t>(40 * MiB));
  CHECK(g.s().segment[kAll].current == 0);
  CHECK(g.s().num_device_alloc == 1);
  Block* b = g.a.malloc(30 * MiB);  // 10 MiB free + a third page... contiguous growth
  CHECK(b->ptr == a->ptr + 30 * MiB);
  CHECK(reserved(g) == static_cast<std::int64_t>(60 * MiB));
  g.a.free(a);
  CHECK(reserved(g) == static_cast<std::int64_t>(60 * MiB));  // frees never unmap
  g.a.empty_cache();  // a covered [0, 30): page 0 is wholly free, page 1 is half used by b
  CHECK(reserved(g) == static_cast<std::int64_t>(40 * MiB));
  auto snap = g.a.snapshot();
  REQUIRE(snap.segments.size() == 1);  // one contiguous mapped range
  CHECK(snap.segments[0].is_expandable);
  CHECK(snap.segments[0].total_size == 40 * MiB);
  g.a.free(b);
  g.a.empty_cache();
  CHECK(reserved(g) == 0);
  g.a.check_invariants();
}

TEST_CASE("device: cudaMalloc fails when the device cannot supply the bytes") {
  device::Device d(device::DeviceSpec{.total = 1 * GiB, .context_bytes = 300 * MiB, .other_processes = 200 * MiB});
  CHECK(d.free_bytes() == 524 * MiB);
  auto a = d.cuda_malloc(500 * MiB);
  REQUIRE(a);
  CHECK_FALSE(d.cuda_malloc(30 * MiB));  // 24 MiB left
  auto b = d.cuda_malloc(23 * MiB);      // rounds to 24 MiB of physical memory (2 MiB granularity)
  REQUIRE(b);
  CHECK(d.free_bytes() == 0);
  d.cuda_free(*a, 500 * MiB);
  auto c = d.cuda_malloc(100 * MiB);
  REQUIRE(c);
  CHECK(*c == *a);  // returned virtual ranges are reused lowest first
  CHECK(d.allowed_maximum() == 1 * GiB);
  d.set_per_process_memory_fraction(0.25);
  CHECK(d.allowed_maximum() == 256 * MiB);
}
