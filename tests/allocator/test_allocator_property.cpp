// Property test: a million random operations, a quarter of them under the sanitizers (mixed sizes
// across both pools, several streams, frees in random order, empty_cache, oversize blocks, device
// exhaustion) with the invariant checker after every step, and every chosen address compared with
// a plain reference implementation of the same rules written here independently (linear scans over
// std::map, no intrusive sets).
#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <vector>

#include "sim/allocator/caching_allocator.hpp"
#include "sim/core/rng.hpp"
#include "tests/support/sanitizers.hpp"

using namespace headroom;
using namespace headroom::alloc;

namespace {

// The reference: segments as address maps of blocks; best fit by scanning every free block.
class ReferenceAllocator {
 public:
  ReferenceAllocator(device::Device& dev, Bytes max_split) : dev_(dev), max_split_(max_split) {}

  std::optional<Address> malloc(Bytes n, StreamId stream) {
    Bytes s = n < 512 ? 512 : (n + 511) / 512 * 512;
    bool small = s <= 1 * MiB;
    Bytes seg_size = small ? 2 * MiB : (s < 10 * MiB ? 20 * MiB : (s + 2 * MiB - 1) / (2 * MiB) * (2 * MiB));
    if (auto hit = best_fit(s, stream, small)) return take(*hit, s, small);
    std::optional<Address> base = dev_.cuda_malloc(seg_size);
    if (!base && release_oversize(s, stream, small)) base = dev_.cuda_malloc(seg_size);
    if (!base) {
      release_all();
      base = dev_.cuda_malloc(seg_size);
    }
    if (!base) return std::nullopt;
    Segment& g = segments_[*base];
    g.size = seg_size;
    g.stream = stream;
    g.small = small;
    g.blocks[*base] = Blk{seg_size, false};
    return take(Pos{*base, *base}, s, small);
  }

  void free(Address p) {
    for (auto& [base, g] : segments_) {
      auto it = g.blocks.find(p);
      if (it == g.blocks.end()) continue;
      it->second.allocated = false;
      auto next = std::next(it);
      if (next != g.blocks.end() && !next->second.allocated) {
        it->second.size += next->second.size;
        g.blocks.erase(next);
      }
      if (it != g.blocks.begin()) {
        auto prev = std::prev(it);
        if (!prev->second.allocated) {
          prev->second.size += it->second.size;
          g.blocks.erase(it);
        }
      }
      return;
    }
    FAIL("reference: free of an unknown address");
  }

  void release_all() {
    for (auto it = segments_.begin(); it != segments_.end();) {
      if (it->second.blocks.size() == 1 && !it->second.blocks.begin()->second.allocated) {
        dev_.cuda_free(it->first, it->second.size);
        it = segments_.erase(it);
      } else {
        ++it;
      }
    }
  }

 private:
  struct Blk {
    Bytes size;
    bool allocated;
  };
  struct Segment {
    Bytes size = 0;
    StreamId stream = 0;
    bool small = false;
    std::map<Address, Blk> blocks;
  };
  struct Pos {
    Address segment, block;
  };

  std::optional<Pos> best_fit(Bytes s, StreamId stream, bool small) {
    std::optional<Pos> best;
    Bytes best_size = 0;
    for (auto& [base, g] : segments_) {
      if (g.stream != stream || g.small != small) continue;
      for (auto& [addr, b] : g.blocks) {
        if (b.allocated || b.size < s) continue;
        if (!best || b.size < best_size || (b.size == best_size && addr < best->block)) {
          best = Pos{base, addr};
          best_size = b.size;
        }
      }
    }
    if (!best) return std::nullopt;
    if (s < max_split_ && best_size >= max_split_) return std::nullopt;      // oversize only for oversize
    if (s >= max_split_ && best_size >= s + 20 * MiB) return std::nullopt;   // the 20 MiB slack
    return best;
  }

  Address take(Pos p, Bytes s, bool small) {
    Segment& g = segments_[p.segment];
    Blk& b = g.blocks[p.block];
    Bytes rest = b.size - s;
    bool split = small ? rest >= 512 : (s < max_split_ && rest > 1 * MiB);
    b.allocated = true;
    if (split) {
      b.size = s;
      g.blocks[p.block + s] = Blk{rest, false};
    }
    return p.block;
  }

  // With max_split_size set: the smallest whole free block >= max(s, max_split) of the stream, else
  // the largest ones downwards until enough is freed.
  bool release_oversize(Bytes s, StreamId stream, bool small) {
    if (max_split_ == kUnlimited) return false;
    Bytes key = std::max(s, max_split_);
    std::vector<std::pair<Bytes, Address>> whole;  // (size, segment) of whole free segments, this stream
    std::vector<std::pair<Bytes, Address>> any;    // every free block of the stream in this pool
    for (auto& [base, g] : segments_) {
      if (g.stream != stream || g.small != small) continue;
      for (auto& [addr, b] : g.blocks) {
        if (b.allocated) continue;
        any.emplace_back(b.size, addr);
        if (g.blocks.size() == 1) whole.emplace_back(b.size, base);
      }
    }
    std::sort(any.begin(), any.end());
    auto fit = std::lower_bound(any.begin(), any.end(), std::pair<Bytes, Address>{key, 0});
    if (fit != any.end()) {
      if (segments_.at(segment_of(fit->second)).blocks.size() != 1) return false;
      release_segment(segment_of(fit->second));
      return true;
    }
    Bytes released = 0;
    for (auto it = any.rbegin(); it != any.rend() && released < key && it->first >= max_split_; ++it) {
      Address seg = segment_of(it->second);
      if (segments_.at(seg).blocks.size() != 1) continue;
      released += it->first;
      release_segment(seg);
    }
    return released >= key;
  }
  Address segment_of(Address block) {
    auto it = segments_.upper_bound(block);
    return std::prev(it)->first;
  }
  void release_segment(Address base) {
    dev_.cuda_free(base, segments_.at(base).size);
    segments_.erase(base);
  }

  device::Device& dev_;
  Bytes max_split_;
  std::map<Address, Segment> segments_;
};

void run_property(std::uint64_t seed, const char* conf, long operations, Bytes capacity) {
  AllocatorConfig cfg = parse_alloc_conf(conf);
  device::Device model_dev(device::DeviceSpec{.name = "model", .total = capacity});
  device::Device ref_dev(device::DeviceSpec{.name = "reference", .total = capacity});
  CachingAllocator model(model_dev, cfg);
  ReferenceAllocator ref(ref_dev, cfg.max_split_size);
  Rng rng(seed);
  // Under the sanitizers a quarter of the walk: every path runs within it (the checks below hold
  // there too), and the rest would cost a minute of CI for no path not taken already.
  operations = headroom::test::sanitized_share(operations, 4);
  std::vector<std::pair<Block*, Address>> live;
  long mallocs = 0, ooms = 0, empties = 0;
  for (long op = 0; op < operations; ++op) {
    double u = rng.uniform();
    bool do_free = !live.empty() && (u < 0.45 || live.size() > 96);
    if (do_free) {
      std::size_t i = static_cast<std::size_t>(rng.uniform_int(0, live.size() - 1));
      auto [blk, addr] = live[i];
      live[i] = live.back();
      live.pop_back();
      model.free(blk);
      ref.free(addr);
    } else if (u < 0.452) {
      model.empty_cache();
      ref.release_all();
      ++empties;
    } else {
      // Mixed sizes: tiny, small-pool, large below 10 MiB, large, and (rarely) oversize.
      double k = rng.uniform();
      Bytes n;
      if (k < 0.30) n = rng.uniform_int(1, 4096);
      else if (k < 0.60) n = rng.uniform_int(4097, 1 * MiB);
      else if (k < 0.85) n = rng.uniform_int(1 * MiB + 1, 10 * MiB);
      else if (k < 0.98) n = rng.uniform_int(10 * MiB, 48 * MiB);
      else n = rng.uniform_int(48 * MiB, 160 * MiB);
      StreamId stream = rng.uniform_int(0, 2);
      Block* b = model.malloc(n, stream);
      std::optional<Address> r = ref.malloc(n, stream);
      ++mallocs;
      if ((b == nullptr) != !r.has_value() || (b && b->ptr != *r)) {
        FAIL("operation " << op << ": malloc(" << n << ", stream " << stream << ") model "
                          << (b ? std::to_string(b->ptr) : std::string("OOM")) << " reference "
                          << (r ? std::to_string(*r) : std::string("OOM")));
      }
      if (b) live.emplace_back(b, *r);
      else ++ooms;
    }
    model.check_invariants();
  }
  CHECK(model_dev.used_bytes() == ref_dev.used_bytes());
  CHECK(mallocs > operations * 2 / 5);
  CHECK(ooms > 0);      // the device filled up at times: the release-and-retry path ran
  CHECK(empties > 0);
  CHECK(model.stats().num_alloc_retries > 0);
  for (auto& [b, a] : live) model.free(b);
  model.empty_cache();
  CHECK(model.reserved_bytes() == 0);
  model.check_invariants();
}

}  // namespace

TEST_CASE("property: 600k random operations match the reference, default configuration") {
  run_property(42, "", 600'000, 512 * MiB);
}

TEST_CASE("property: 400k random operations match the reference, max_split_size_mb:64") {
  run_property(7, "max_split_size_mb:64", 400'000, 512 * MiB);
}
