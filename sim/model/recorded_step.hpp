#pragma once
// A forward pass recorded on a real GPU (kernels/record_steps.py) set against the allocation
// program headroom builds for the same model and shape: `headroom calibrate-program`.
//
// Each recorded snapshot `<stem>.pickle` (torch.cuda.memory._dump_snapshot) has a sidecar
// `<stem>.step.json` saying what it holds:
//   {"format": "headroom-recorded-step/1", "model": "Llama-3.1-8B", "layers": 4, "tp": 1,
//    "program": "forward", "tokens": 2048, "seqs": 4, "decode_seqs": 0,
//    "attention": "flash-attn", "dtype": "bf16",
//    "kernels": "...", "torch_version": "...", "device": "..."}          (the last three: information)
// `layers`: the decoder layers actually built (the script drops layers so random weights fit);
// 0 or absent: all of the model's. The history must cover exactly one forward pass, with weights,
// inputs and KV cache allocated before recording began.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sim/allocator/snapshot.hpp"
#include "sim/model/allocation_program.hpp"
#include "sim/model/forward_program.hpp"
#include "sim/model/model_config.hpp"

namespace headroom::model {

inline constexpr const char* kRecordedStepFormat = "headroom-recorded-step/1";

struct RecordedStep {
  std::string model;  // a catalogue name, Hub id or config.json path (model_source.hpp)
  int layers = 0;     // 0: the model's own
  ForwardShape shape;
  AttentionBackend attention = AttentionBackend::flash_attn;
  std::string dtype = "bf16";
  std::string kernels, torch_version, device;  // information only
};

// "<dir>/<stem>.step.json" for "<dir>/<stem>.<ext>".
std::filesystem::path recorded_step_sidecar(const std::filesystem::path& snapshot);

// Throws InputError naming the file and field.
RecordedStep read_recorded_step(const std::filesystem::path& path);
void write_recorded_step(const RecordedStep& step, const std::filesystem::path& path);

// The model (its layers cut to `layers`) and the forward program the step is compared with.
ModelConfig recorded_model(const RecordedStep& step);
AllocationProgram recorded_program(const RecordedStep& step);

// Allocations in order with their requested sizes, and what they add up to.
struct AllocationSequence {
  std::vector<Bytes> sizes;               // requested bytes of each allocation, in order
  std::vector<std::string> names;         // program only: "<tensor> (layer N)"
  Bytes peak = 0;                         // most requested bytes live at once, above the start
  Bytes left_live = 0;                    // allocated during the sequence and not freed by its end
};

// From a snapshot's trace (the first device with one): `alloc` adds its address's requested
// size, the first `free_requested` or `free_completed` of that address removes it; frees of
// blocks allocated before recording began are not part of the step and are ignored.
AllocationSequence recorded_allocations(const alloc::Snapshot& snapshot, const std::string& where);
AllocationSequence program_allocations(const AllocationProgram& program);

struct SizeDifference {
  Bytes bytes = 0;
  std::int64_t recorded = 0;  // allocations of exactly this size
  std::int64_t program = 0;
};

struct ProgramComparison {
  AllocationSequence recorded, program;
  std::vector<SizeDifference> sizes;  // sizes whose counts differ, ascending
  // First position where the two sequences' sizes differ (or one ends); -1 when identical.
  std::int64_t first_difference = -1;
  bool matches() const {
    return first_difference < 0 && recorded.peak == program.peak && recorded.left_live == program.left_live;
  }
};

ProgramComparison compare_allocations(AllocationSequence recorded, AllocationSequence program);

}  // namespace headroom::model
