// Refilling a step program for a new shape (ProgramBuilder's refill mode, refill_step_program):
// the result is the fresh build op for op, or nothing when the structure differs.
#include <catch2/catch.hpp>

#include "sim/model/catalogue.hpp"
#include "sim/model/step_program.hpp"

using namespace headroom;
using namespace headroom::model;

namespace {

// Every field of every op, and the program's own figures.
void require_same_program(const AllocationProgram& a, const AllocationProgram& b) {
  REQUIRE(a.name == b.name);
  REQUIRE(a.slots == b.slots);
  REQUIRE(a.persistent == b.persistent);
  REQUIRE(a.layers == b.layers);
  REQUIRE(a.ops.size() == b.ops.size());
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    INFO("op " << i);
    const ProgramOp& x = a.ops[i];
    const ProgramOp& y = b.ops[i];
    REQUIRE(x.bytes == y.bytes);
    REQUIRE(x.slot == y.slot);
    REQUIRE(x.layer == y.layer);
    REQUIRE(x.kind == y.kind);
    REQUIRE(x.tensor == y.tensor);
    REQUIRE(x.persistent == y.persistent);
  }
}

}  // namespace

TEST_CASE("a refilled step program is the fresh build of the new shape, op for op") {
  ModelConfig llama = catalogue_model("Llama-3.1-8B");
  ForwardOptions fa;
  fa.attention_splits = 32;  // FA3's split accumulators: two more tensors per layer
  ForwardOptions fi;
  fi.attention = AttentionBackend::flashinfer;
  fi.attention_workspace = kVllmFlashInferWorkspace;  // a persistent op
  SamplerOptions native;
  native.kind = SamplerKind::native;
  for (const ForwardOptions& o : {fa, fi}) {
    const AllocationProgram like = step_program(llama, {100, 3, 2, 1}, o, native);
    // Another prefill length, and other seqs too: only the sizes differ.
    for (ForwardShape to : {ForwardShape{517, 3, 2, 1}, ForwardShape{2048, 5, 1, 1}}) {
      std::optional<AllocationProgram> p = refill_step_program(AllocationProgram(like), llama, to, o, native);
      REQUIRE(p);
      require_same_program(*p, step_program(llama, to, o, native));
    }
  }
}

TEST_CASE("a refill whose calls differ from the program's ops gives nothing") {
  ModelConfig qwen = catalogue_model("Qwen3-30B-A3B");
  ForwardOptions chunked;
  chunked.moe_chunk_tokens = 64;
  const AllocationProgram one_chunk = step_program(qwen, {60, 1, 0, 1}, chunked);
  // Within one chunk the calls repeat; past it fused_experts aligns a second chunk: more ops.
  std::optional<AllocationProgram> same = refill_step_program(AllocationProgram(one_chunk), qwen, {50, 1, 0, 1}, chunked);
  REQUIRE(same);
  require_same_program(*same, step_program(qwen, {50, 1, 0, 1}, chunked));
  CHECK_FALSE(refill_step_program(AllocationProgram(one_chunk), qwen, {130, 1, 0, 1}, chunked));
  // Fewer ops: a two-chunk program refilled for one chunk.
  CHECK_FALSE(refill_step_program(step_program(qwen, {130, 1, 0, 1}, chunked), qwen, {60, 1, 0, 1}, chunked));
  // MLA: a decode-only step has no prefill path; a mixed step does.
  ModelConfig ds = catalogue_model("DeepSeek-V3");
  CHECK_FALSE(refill_step_program(step_program(ds, {8, 8, 8, 1}), ds, {72, 9, 8, 1}));
  // Another model's program (other layer count).
  CHECK_FALSE(refill_step_program(step_program(ds, {8, 8, 8, 1}), qwen, {8, 8, 8, 1}));
}
