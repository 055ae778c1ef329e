#include "sim/model/recorded_step.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/text_file.hpp"
#include "sim/model/json_text.hpp"
#include "sim/model/model_limits.hpp"
#include "sim/model/model_source.hpp"

namespace headroom::model {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path recorded_step_sidecar(const fs::path& snapshot) {
  fs::path p = snapshot;
  p.replace_extension(".step.json");
  return p;
}

namespace {

[[noreturn]] void fail(const fs::path& path, std::string_view field, std::string_view what) {
  throw InputError(fmt::format("{}: field '{}': {}", path.string(), field, what));
}

std::int64_t integer(const json& j, const fs::path& path, const char* field, std::int64_t lo, bool required,
                     std::int64_t hi) {
  if (!j.contains(field)) {
    if (required) fail(path, field, "missing");
    return lo;
  }
  const json& v = j.at(field);
  if (!v.is_number_integer() || v.get<std::int64_t>() < lo)
    fail(path, field, fmt::format("expected an integer of at least {}, got {}", lo, v.dump()));
  if (v.is_number_unsigned() ? v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi) : v.get<std::int64_t>() > hi)
    fail(path, field, fmt::format("{} is above the limit of {} (docs/limits.md)", v.dump(), hi));
  return v.get<std::int64_t>();
}

std::string text(const json& j, const fs::path& path, const char* field, const char* fallback) {
  if (!j.contains(field)) {
    if (!fallback) fail(path, field, "missing");
    return fallback;
  }
  if (!j.at(field).is_string()) fail(path, field, fmt::format("expected a string, got {}", j.at(field).dump()));
  return j.at(field).get<std::string>();
}

}  // namespace

RecordedStep read_recorded_step(const fs::path& path) {
  refuse_special_file(path, "step description");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(fmt::format("{}: cannot open the step description (kernels/record_steps.py writes one beside "
                                 "each snapshot)",
                                 path.string()));
  const std::string bytes = read_text_file(path, "step description");
  const json j = parse_json_text(bytes, path.string());
  if (!j.is_object()) throw InputError(fmt::format("{}: expected a JSON object", path.string()));
  static const std::vector<std::string> known = {"format", "model",     "layers", "tp",     "program",
                                                 "tokens", "seqs",      "decode_seqs", "attention", "dtype",
                                                 "kernels", "torch_version", "device"};
  for (const auto& [key, value] : j.items())
    if (std::find(known.begin(), known.end(), key) == known.end()) fail(path, key, "unknown field");
  if (text(j, path, "format", nullptr) != kRecordedStepFormat)
    fail(path, "format", fmt::format("expected '{}', got {}", kRecordedStepFormat, j.at("format").dump()));
  RecordedStep s;
  s.model = text(j, path, "model", nullptr);
  s.layers = static_cast<int>(integer(j, path, "layers", 0, false, limits::kMaxLayers));
  s.shape.tp = static_cast<int>(integer(j, path, "tp", 1, false, limits::kMaxTensorParallel));
  const std::string program = text(j, path, "program", "forward");
  if (program != "forward") fail(path, "program", fmt::format("expected 'forward', got '{}'", program));
  s.shape.tokens = integer(j, path, "tokens", 1, true, limits::kMaxStepTokens);
  s.shape.seqs = integer(j, path, "seqs", 1, true, limits::kMaxStepSeqs);
  s.shape.decode_seqs = integer(j, path, "decode_seqs", 0, false, limits::kMaxStepSeqs);
  s.attention = parse_attention_backend(text(j, path, "attention", "flash-attn"), path.string() + ": field 'attention'");
  s.dtype = text(j, path, "dtype", "bf16");
  s.kernels = text(j, path, "kernels", "");
  s.torch_version = text(j, path, "torch_version", "");
  s.device = text(j, path, "device", "");
  try {
    validate_forward_shape(s.shape);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", path.string(), e.what()));
  }
  return s;
}

void write_recorded_step(const RecordedStep& s, const fs::path& path) {
  json j = {{"format", kRecordedStepFormat},
            {"model", s.model},
            {"layers", s.layers},
            {"tp", s.shape.tp},
            {"program", "forward"},
            {"tokens", s.shape.tokens},
            {"seqs", s.shape.seqs},
            {"decode_seqs", s.shape.decode_seqs},
            {"attention", std::string(attention_backend_name(s.attention))},
            {"dtype", s.dtype}};
  if (!s.kernels.empty()) j["kernels"] = s.kernels;
  if (!s.torch_version.empty()) j["torch_version"] = s.torch_version;
  if (!s.device.empty()) j["device"] = s.device;
  write_file_atomically(path, [&](std::ostream& o) { o << j.dump(2) << '\n'; });
}

ModelConfig recorded_model(const RecordedStep& step) {
  ModelConfig config = load_model(step.model);
  if (step.layers > config.layers)
    throw InputError(fmt::format("recorded step: layers {} is more than {}'s {}", step.layers, config.name,
                                 config.layers));
  if (step.layers > 0) config.layers = step.layers;
  if (step.dtype != dtype_name(config.dtype))
    throw InputError(fmt::format("recorded step: dtype '{}' differs from {}'s '{}', whose activations the program "
                                 "sizes",
                                 step.dtype, config.name, dtype_name(config.dtype)));
  return config;
}

AllocationProgram recorded_program(const RecordedStep& step) {
  ForwardOptions options;
  options.attention = step.attention;
  return forward_program(recorded_model(step), step.shape, options);
}

AllocationSequence recorded_allocations(const alloc::Snapshot& snapshot, const std::string& where) {
  const std::vector<alloc::TraceEvent>* trace = nullptr;
  for (const auto& t : snapshot.device_traces)
    if (!t.empty()) {
      trace = &t;
      break;
    }
  if (!trace)
    throw InputError(fmt::format("{}: the snapshot has no trace (record it with "
                                 "torch.cuda.memory._record_memory_history)",
                                 where));
  AllocationSequence seq;
  std::unordered_map<Address, Bytes> live;
  Bytes now = 0;
  for (const alloc::TraceEvent& e : *trace) {
    switch (e.action) {
      case alloc::TraceAction::Alloc:
        seq.sizes.push_back(e.size);
        live[e.addr] = e.size;
        now += e.size;
        seq.peak = std::max(seq.peak, now);
        break;
      case alloc::TraceAction::FreeRequested:
      case alloc::TraceAction::FreeCompleted:
        if (auto it = live.find(e.addr); it != live.end()) {
          now -= it->second;
          live.erase(it);
        }
        break;
      default: break;
    }
  }
  seq.left_live = now;
  return seq;
}

AllocationSequence program_allocations(const AllocationProgram& program) {
  AllocationSequence seq;
  std::vector<Bytes> slot_bytes(program.slots, 0);
  Bytes now = 0;
  for (const ProgramOp& op : program.ops) {
    if (op.kind == OpKind::alloc) {
      seq.sizes.push_back(op.bytes);
      seq.names.push_back(op.layer == kNoLayer ? std::string(tensor_name(op.tensor))
                                               : fmt::format("{} (layer {})", tensor_name(op.tensor), op.layer));
      now += op.bytes;
      if (!op.persistent) slot_bytes[op.slot] = op.bytes;
      seq.peak = std::max(seq.peak, now);
    } else {
      now -= slot_bytes[op.slot];
      slot_bytes[op.slot] = 0;
    }
  }
  seq.left_live = now;
  return seq;
}

ProgramComparison compare_allocations(AllocationSequence recorded, AllocationSequence program) {
  ProgramComparison c;
  std::map<Bytes, SizeDifference> counts;
  for (Bytes b : recorded.sizes) counts[b].recorded += 1;
  for (Bytes b : program.sizes) counts[b].program += 1;
  for (auto& [bytes, d] : counts)
    if (d.recorded != d.program) {
      d.bytes = bytes;
      c.sizes.push_back(d);
    }
  const std::size_t n = std::min(recorded.sizes.size(), program.sizes.size());
  for (std::size_t i = 0; i < n && c.first_difference < 0; ++i)
    if (recorded.sizes[i] != program.sizes[i]) c.first_difference = static_cast<std::int64_t>(i);
  if (c.first_difference < 0 && recorded.sizes.size() != program.sizes.size())
    c.first_difference = static_cast<std::int64_t>(n);
  c.recorded = std::move(recorded);
  c.program = std::move(program);
  return c;
}

}  // namespace headroom::model
