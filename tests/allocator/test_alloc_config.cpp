// PYTORCH_CUDA_ALLOC_CONF parsing: PyTorch's syntax and its error cases (spec §0, §7 rows 6 and 9).
#include <catch2/catch.hpp>

#include "sim/allocator/alloc_config.hpp"
#include "sim/core/error.hpp"

using namespace headroom;
using namespace headroom::alloc;

TEST_CASE("alloc conf: defaults and every modelled key") {
  AllocatorConfig d = parse_alloc_conf("");
  CHECK(d.max_split_size == kUnlimited);
  CHECK(d.max_non_split_rounding_size == 20 * MiB);
  CHECK_FALSE(d.expandable_segments);
  CHECK(d.garbage_collection_threshold == 0.0);
  AllocatorConfig c = parse_alloc_conf(
      "max_split_size_mb:128, expandable_segments:True,garbage_collection_threshold:0.6,"
      "max_non_split_rounding_mb:64,roundup_power2_divisions:[256:1,512:2,1024:4,>:8],backend:native,"
      "release_lock_on_cudamalloc:true,pinned_use_cuda_host_register:False,pinned_num_register_threads:8");
  CHECK(c.max_split_size == 128 * MiB);
  CHECK(c.expandable_segments);
  CHECK(c.garbage_collection_threshold == 0.6);
  CHECK(c.max_non_split_rounding_size == 64 * MiB);
  // [256:1,...]: the first key also fills every lower interval; '>' fills every later one.
  CHECK(c.roundup_power2_divisions[0] == 1);
  CHECK(c.roundup_power2_divisions[8] == 1);
  CHECK(c.roundup_power2_divisions[9] == 2);
  CHECK(c.roundup_power2_divisions[10] == 4);
  CHECK(c.roundup_power2_divisions[11] == 8);
  CHECK(c.roundup_power2_divisions[15] == 8);
  CHECK(parse_alloc_conf("large_segment_size_mb:64").max_non_split_rounding_size == 64 * MiB);
  CHECK(parse_alloc_conf("max_split_size_mb:20").max_split_size == 20 * MiB);  // newest: >= 20
  CHECK(parse_alloc_conf("per_process_memory_fraction:0.5").per_process_memory_fraction == 0.5);
}

TEST_CASE("alloc conf: re-parsing resets options that are absent (§7 row 6)") {
  AllocatorConfig a = parse_alloc_conf("roundup_power2_divisions:4");
  CHECK(a.divisions_for(88 * MiB) == 4);
  AllocatorConfig b = parse_alloc_conf("garbage_collection_threshold:0.5,max_split_size_mb:40");
  CHECK(b.divisions_for(88 * MiB) == 0);
  CHECK(b.max_split_size == 40 * MiB);
}

TEST_CASE("alloc conf: canonical string round-trips") {
  for (const char* s : {"", "max_split_size_mb:128", "expandable_segments:True",
                        "roundup_power2_divisions:[64:8,128:2,256:2,512:2,1024:1,>:1]",
                        "garbage_collection_threshold:0.8,max_split_size_mb:40"}) {
    AllocatorConfig c = parse_alloc_conf(s);
    AllocatorConfig again = parse_alloc_conf(to_string(c));
    CHECK(to_string(again) == to_string(c));
    CHECK(again.roundup_power2_divisions == c.roundup_power2_divisions);
    CHECK(again.max_split_size == c.max_split_size);
  }
}

TEST_CASE("alloc conf: PyTorch's error cases (§7 row 9) name the string and the problem") {
  auto err = [](const char* s) {
    try {
      parse_alloc_conf(s, "--alloc-conf");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(err("foo:1,bar:2") ==
        "--alloc-conf: 'foo:1,bar:2': unrecognized CachingAllocator option 'foo' (known: max_split_size_mb, "
        "max_non_split_rounding_mb, garbage_collection_threshold, roundup_power2_divisions, expandable_segments, "
        "large_segment_size_mb, per_process_memory_fraction, backend, release_lock_on_cudamalloc, "
        "graph_capture_record_stream_reuse, pinned_*)");
  CHECK(err("garbage_collection_threshold:1.2") ==
        "--alloc-conf: 'garbage_collection_threshold:1.2': garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
  CHECK(err("max_split_size_mb:2") ==
        "--alloc-conf: 'max_split_size_mb:2': CachingAllocator option max_split_size_mb too small, must be >= 20");
  CHECK(err("pinned_num_register_threads:1024") ==
        "--alloc-conf: 'pinned_num_register_threads:1024': number of register threads should be less than or "
        "equal to 128");
  CHECK(err("expandable_segments:yes") ==
        "--alloc-conf: 'expandable_segments:yes': expected 'True' or 'False' but got 'yes'");
  CHECK(err("max_split_size_mb") == "--alloc-conf: 'max_split_size_mb': expected ':' but got ''");
  CHECK(err("max_split_size_mb:abc") ==
        "--alloc-conf: 'max_split_size_mb:abc': expected a non-negative integer but got 'abc'");
  CHECK(err("max_split_size_mb:128 expandable_segments:True") ==
        "--alloc-conf: 'max_split_size_mb:128 expandable_segments:True': expected a non-negative integer but got "
        "'128expandable_segments'");
  CHECK(err("roundup_power2_divisions:3") ==
        "--alloc-conf: 'roundup_power2_divisions:3': for roundups, the divisions has to be power of 2");
  CHECK(err("roundup_power2_divisions:[100:2]") ==
        "--alloc-conf: 'roundup_power2_divisions:[100:2]': for roundups, the intervals have to be power of 2");
  CHECK(err("roundup_power2_divisions:[64:2") ==  // as PyTorch: it wants the separator first
        "--alloc-conf: 'roundup_power2_divisions:[64:2': expected ',' but got ''");
  CHECK(err("backend:cudaMallocAsync") ==
        "--alloc-conf: 'backend:cudaMallocAsync': backend 'cudaMallocAsync' is not modelled: headroom models the "
        "native caching allocator only");
  CHECK(err("large_segment_size_mb:8") == "--alloc-conf: 'large_segment_size_mb:8': large_segment_size_mb must be > 10");
  CHECK(err("max_split_size_mb:128;expandable_segments:True") ==
        "--alloc-conf: 'max_split_size_mb:128;expandable_segments:True': expected a non-negative integer but got "
        "'128;expandable_segments'");
}
