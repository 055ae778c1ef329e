// Snapshots read as .pickle.gz / .json.gz (issue 19 item 5): the real H100 recordings of
// ../shared/gpu as PyTorch's gzip wrote them, the same data as the bytes `gunzip -k` gives, and the
// exact errors for a truncated file, a bad CRC-32 and a decompression bomb.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "sim/allocator/snapshot.hpp"
#include "sim/allocator/snapshot_limits.hpp"
#include "sim/core/error.hpp"
#include "sim/core/gzip.hpp"
#include "tests/support/gzip_data.hpp"
#include "tests/support/test_data.hpp"

using namespace headroom;
using namespace headroom::alloc;
namespace fs = std::filesystem;

TEST_CASE("snapshot gzip: a real H100 recording reads compressed, equal to its decompressed pickle") {
  // The smallest real recording (the one with CUDA-graph private pools): the reading, not the size,
  // is under test, and the suite runs it again under the sanitizers.
  const fs::path gz = test::gpu_file("h100-2026-11-25/recordings/graphs_private_s2.pickle.gz");
  const Snapshot s = read_snapshot(gz);
  REQUIRE(s.device_traces.size() == 1);
  // graphs_private_s2.meta.json: "trace_entries": 25372; 80 segments at the end
  // ("segment.all.current"), 23748149248 bytes reserved ("reserved_bytes.all.current").
  CHECK(s.device_traces[0].size() == 25372);
  CHECK(s.segments.size() == 80);
  Bytes reserved = 0;
  for (const SnapshotSegment& seg : s.segments) reserved += seg.total_size;
  CHECK(reserved == 23748149248);

  // The same bytes uncompressed (a temporary, never kept) give the same snapshot.
  const std::string pickle = gunzip(test::slurp(gz), limits::kMaxSnapshotBytes, gz.string(), "the limit");
  const fs::path dir = test::temp_dir("gzip");
  test::write(dir / "graphs_private_s2.pickle", pickle);
  // Each snapshot is compared by its JSON text, written once per snapshot.
  const std::string expected = snapshot_to_json_text(s);
  CHECK(snapshot_to_json_text(read_snapshot(dir / "graphs_private_s2.pickle")) == expected);
  // And the JSON form compressed.
  test::write(dir / "s.json.gz", test::gzip(expected));
  CHECK(snapshot_to_json_text(read_snapshot(dir / "s.json.gz")) == expected);
  fs::remove_all(dir);
}

TEST_CASE("snapshot gzip: truncated, corrupt and bomb files are clear errors naming the file") {
  const fs::path dir = test::temp_dir("gzip-bad");
  const std::string json = "{\"segments\": [], \"device_traces\": [[]]}";
  const std::string gz = test::gzip(json);

  test::write(dir / "cut.json.gz", gz.substr(0, gz.size() - 3));
  CHECK_THROWS_WITH(read_snapshot(dir / "cut.json.gz"),
                    (dir / "cut.json.gz").string() + ": the gzip data is truncated: it ends after " +
                        std::to_string(gz.size() - 3) +
                        " compressed bytes, inside a member, before its CRC-32 and length trailer");

  std::string bad = gz;
  bad[gz.size() - 6] = static_cast<char>(bad[gz.size() - 6] ^ 0x40);  // inside the CRC-32
  test::write(dir / "crc.json.gz", bad);
  CHECK_THROWS_WITH(read_snapshot(dir / "crc.json.gz"), (dir / "crc.json.gz").string() +
                                                            ": corrupt gzip data near compressed byte " +
                                                            std::to_string(gz.size() - 4) + ": incorrect data check");

  test::write(dir / "text.json.gz", test::gzip("hello"));
  CHECK_THROWS_WITH(read_snapshot(dir / "text.json.gz"),
                    (dir / "text.json.gz").string() +
                        ": the decompressed data is not a PyTorch memory snapshot (expected a pickle from "
                        "torch.cuda.memory._dump_snapshot() or its JSON form)");
  test::write(dir / "empty.pickle.gz", test::gzip(""));
  CHECK_THROWS_WITH(read_snapshot(dir / "empty.pickle.gz"),
                    (dir / "empty.pickle.gz").string() +
                        ": the gzip data decompresses to nothing (expected a pickle from "
                        "torch.cuda.memory._dump_snapshot() or its JSON form)");

  // 1 MiB past the snapshot limit of zeros: ~0.5 MB of gzip, refused once 512 MiB are out.
  const std::string bomb = test::gzip(std::string(limits::kMaxSnapshotBytes + (1 << 20), '\0'));
  CHECK(bomb.size() < 1'000'000);
  test::write(dir / "bomb.pickle.gz", bomb);
  CHECK_THROWS_WITH(read_snapshot(dir / "bomb.pickle.gz"),
                    (dir / "bomb.pickle.gz").string() +
                        ": the gzip data decompresses to more than 512.00 MiB (536870912 bytes), the limit for one "
                        "snapshot (docs/limits.md)");
  fs::remove_all(dir);
}
