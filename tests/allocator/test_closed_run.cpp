// Closed runs (sim/allocator/closed_run.hpp): a run that leaves the allocator as it found it is
// applied again with repeat() instead of being replayed. Property test against a twin allocator that
// replays every run: after every step the two have the same statistics (every field of
// torch.cuda.memory_stats()), the same memory map block by block (requested sizes included) and the
// same fragmentation figures, and their mallocs return the same addresses.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/allocator/caching_allocator.hpp"
#include "sim/core/rng.hpp"
#include "tests/support/sanitizers.hpp"

using namespace headroom;
using namespace headroom::alloc;

namespace {

// A program: mallocs and frees of its own blocks. A closed one frees all of them; a leaky one keeps
// its last block (as a step that creates a persistent buffer).
struct RunOp {
  bool is_free = false;
  Bytes bytes = 0;         // malloc
  std::size_t which = 0;   // free: the index of the malloc among the program's
};
struct Program {
  std::vector<RunOp> ops;
  bool leaky = false;
};

Program random_program(Rng& rng, bool leaky) {
  Program p;
  p.leaky = leaky;
  std::vector<std::size_t> live;
  std::size_t made = 0;
  const int n = static_cast<int>(rng.uniform_int(2, 24));
  for (int i = 0; i < n; ++i) {
    if (!live.empty() && rng.bernoulli(0.4)) {
      const std::size_t k = rng.uniform_int(0, live.size() - 1);
      p.ops.push_back({true, 0, live[k]});
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    } else {
      const double k = rng.uniform();
      const Bytes bytes = k < 0.35   ? rng.uniform_int(1, 1 * MiB)
                          : k < 0.85 ? rng.uniform_int(1 * MiB + 1, 12 * MiB)
                                     : rng.uniform_int(12 * MiB, 90 * MiB);
      p.ops.push_back({false, bytes, 0});
      live.push_back(made++);
    }
  }
  if (leaky && live.empty()) {
    p.ops.push_back({false, 4 * MiB, 0});
    live.push_back(made++);
  }
  for (std::size_t i = leaky ? 1 : 0; i < live.size(); ++i) p.ops.push_back({true, 0, live[i]});
  return p;
}

// Runs `p` on `a`: `made` holds its mallocs' blocks, null once freed (the run stops at a failed
// malloc and frees what it holds, as the program runner does), `returned` the address of every block
// malloc gave.
// Returns whether it ran to its end.
bool run_ops(CachingAllocator& a, const Program& p, std::vector<Block*>& made, std::vector<Address>& returned,
             std::vector<Address>& addresses) {
  made.clear();
  returned.clear();
  for (const RunOp& op : p.ops) {
    if (op.is_free) {
      a.free(made[op.which]);
      made[op.which] = nullptr;
      continue;
    }
    Block* b = a.malloc(op.bytes, 0);
    addresses.push_back(b ? b->ptr : 0);
    if (!b) {
      for (Block*& m : made)
        if (m) a.free(m), m = nullptr;
      return false;
    }
    made.push_back(b);
    returned.push_back(b->ptr);
  }
  return true;
}

struct Memo {
  std::optional<StateId> state;
  Bytes device_free = 0;
  ClosedRun run;
};

void same_state(const CachingAllocator& a, const CachingAllocator& b, long step) {
  INFO("step " << step);
  REQUIRE(to_memory_stats_json(a.stats()) == to_memory_stats_json(b.stats()));
  const std::vector<SnapshotSegment> sa = a.segments(), sb = b.segments();
  REQUIRE(sa.size() == sb.size());
  for (std::size_t i = 0; i < sa.size(); ++i) {
    REQUIRE(sa[i].address == sb[i].address);
    REQUIRE(sa[i].total_size == sb[i].total_size);
    REQUIRE(sa[i].requested_size == sb[i].requested_size);
    REQUIRE(sa[i].blocks.size() == sb[i].blocks.size());
    for (std::size_t j = 0; j < sa[i].blocks.size(); ++j) {
      REQUIRE(sa[i].blocks[j].address == sb[i].blocks[j].address);
      REQUIRE(sa[i].blocks[j].size == sb[i].blocks[j].size);
      REQUIRE(sa[i].blocks[j].requested_size == sb[i].blocks[j].requested_size);
      REQUIRE(sa[i].blocks[j].state == sb[i].blocks[j].state);
    }
  }
  const Fragmentation fa = a.fragmentation(), fb = b.fragmentation();
  REQUIRE(fa.reserved == fb.reserved);
  REQUIRE(fa.allocated == fb.allocated);
  REQUIRE(fa.largest_free_block == fb.largest_free_block);
  REQUIRE(fa.free_blocks == fb.free_blocks);
  REQUIRE(a.device().used_bytes() == b.device().used_bytes());
}

}  // namespace

TEST_CASE("closed runs: repeating a run's effect leaves the allocator as replaying it does, step after step") {
  const Bytes capacity = 1 * GiB;  // small enough for segments to be released and OOMs to happen
  device::Device dev_a(device::DeviceSpec{.name = "repeating", .total = capacity});
  device::Device dev_b(device::DeviceSpec{.name = "replaying", .total = capacity});
  CachingAllocator a(dev_a), b(dev_b);
  Rng rng(2026);
  std::vector<Program> programs;
  for (int i = 0; i < 8; ++i) programs.push_back(random_program(rng, i == 7));
  std::vector<Memo> memos(programs.size());
  std::vector<std::pair<Block*, Block*>> held;  // blocks allocated outside the runs, on a and on b
  std::vector<Block*> made_a, made_b;
  std::vector<Address> returned_a, returned_b;
  long repeated = 0, closed = 0, open = 0, failed = 0;
  std::size_t last = 0;
  // Under the sanitizers the same walk (OOMs and releases come late in it), compared every 4th step.
  const long steps = 1200;
  for (long step = 0; step < steps; ++step) {
    const double u = rng.uniform();
    if (u < 0.80) {
      // Half the time the program that ran last, as serving's steps repeat a shape.
      const std::size_t i = rng.bernoulli(0.5) ? last : rng.uniform_int(0, programs.size() - 1);
      last = i;
      const Program& p = programs[i];
      Memo& m = memos[i];
      std::vector<Address> addr_a, addr_b;
      const bool ran_b = run_ops(b, p, made_b, returned_b, addr_b);
      if (m.state == a.state_id() && m.device_free == dev_a.free_bytes()) {
        a.repeat(m.run);
        ++repeated;
        REQUIRE(ran_b);  // the replay completes too
      } else {
        const StateId at = a.state_id();
        const Bytes free_at = dev_a.free_bytes();
        const RunMark mark = a.begin_run();
        const bool ran_a = run_ops(a, p, made_a, returned_a, addr_a);
        REQUIRE(ran_a == ran_b);
        REQUIRE(addr_a == addr_b);
        if (!ran_a) ++failed;
        if (a.end_run(mark, ran_a && !p.leaky, returned_a, 0, m.run)) {
          REQUIRE(a.state_id() == at);  // the id comes back with the map
          m.state = at;
          m.device_free = free_at;
          ++closed;
        } else {
          m.state.reset();
          ++open;
        }
      }
      // A leaky program's block stays, held outside the runs.
      if (p.leaky && ran_b) {
        Block* ka = nullptr;
        for (Block* x : made_a) if (x) ka = x;
        Block* kb = nullptr;
        for (Block* x : made_b) if (x) kb = x;
        if (ka) held.emplace_back(ka, kb);
        else {  // repeated: a leaky run is never closed, so this branch is not reached
          FAIL("a leaky program's run was repeated");
        }
      }
    } else if (u < 0.90 && !held.empty()) {
      const std::size_t k = rng.uniform_int(0, held.size() - 1);
      a.free(held[k].first);
      b.free(held[k].second);
      held[k] = held.back();
      held.pop_back();
    } else if (u < 0.96) {
      const Bytes n = rng.uniform_int(1, 30 * MiB);
      Block* x = a.malloc(n, 0);
      Block* y = b.malloc(n, 0);
      REQUIRE((x == nullptr) == (y == nullptr));
      if (x) {
        REQUIRE(x->ptr == y->ptr);
        held.emplace_back(x, y);
      }
    } else if (u < 0.98) {
      a.empty_cache();
      b.empty_cache();
    } else {
      a.reset_peak_stats();
      b.reset_peak_stats();
    }
    if (headroom::test::sanitized_every(step, 4)) same_state(a, b, step);
  }
  a.check_invariants();
  // The walk took every path: runs repeated, runs recorded, runs that were not closed (a leaky
  // program, an OOM, a segment created or released) and failures.
  CHECK(repeated > steps / 6);
  CHECK(closed > steps / 20);
  CHECK(open > steps / 20);
  CHECK(failed > 0);
  CHECK(a.stats().num_ooms > 0);
  for (auto& [x, y] : held) a.free(x), b.free(y);
  same_state(a, b, steps);
}

TEST_CASE("closed runs: only the plain configuration repeats, and a new epoch ends every memo") {
  device::Device dev(device::DeviceSpec{.name = "d", .total = 4 * GiB});
  CachingAllocator a(dev);
  ClosedRun run;
  auto closed_run = [&] {
    const RunMark mark = a.begin_run();
    Block* x = a.malloc(3 * MiB, 0);
    Block* y = a.malloc(200 * 1024, 0);
    std::vector<Address> made{x->ptr, y->ptr};
    a.free(x);
    a.free(y);
    return a.end_run(mark, true, made, 0, run);
  };
  // The first run creates segments: not closed. The second finds them cached: closed.
  CHECK_FALSE(closed_run());
  const StateId warm = a.state_id();
  REQUIRE(closed_run());
  CHECK(a.state_id() == warm);
  // Its writes: the two free blocks its frees left (a 2 MiB small segment's and a 20 MiB large one's
  // whole blocks), each with the request of the block freed last into it.
  REQUIRE(run.writes.size() == 2);
  for (const RequestedWrite& w : run.writes) CHECK(w.requested == (w.small ? 200 * 1024 : 3 * MiB));
  // The caller's word counts: a run the caller says freed a block of its own caller is not closed.
  {
    const RunMark mark = a.begin_run();
    Block* x = a.malloc(1 * MiB, 0);
    std::vector<Address> made{x->ptr};
    a.free(x);
    CHECK_FALSE(a.end_run(mark, false, made, 0, run));
    CHECK_FALSE(a.state_id() == warm);
  }
  const StateId before = a.state_id();
  a.empty_cache();
  CHECK_FALSE(a.state_id() == before);
  // Expandable segments: the configuration is no longer plain, nothing is closed.
  a.set_config(parse_alloc_conf("expandable_segments:True"));
  CHECK_FALSE(closed_run());
  CHECK_FALSE(closed_run());
  // record_history: not plain either.
  a.set_config(parse_alloc_conf(""));
  a.empty_cache();
  CHECK_FALSE(closed_run());  // segments made again
  REQUIRE(closed_run());
  a.record_history(true, 100);
  CHECK_FALSE(closed_run());
}
