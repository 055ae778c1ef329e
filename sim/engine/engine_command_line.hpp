#pragma once
// A server's command line, as a user pastes it, read against the engines' flag tables
// (engine_flags.hpp): which engine it starts, its model and TP size, the knobs its flags set, the
// allocator configuration and the flags that do not matter. Flags are read as the engine's
// argparse reads them: --a-b and --a_b alike, --flag=value, --no-flag for a boolean, nargs lists;
// a repeated flag keeps its last value.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/engine/engine_traits.hpp"

namespace headroom::engine {

// One knob a flag sets: a YAML scalar ("0.85", "true", "FLASHINFER") or a list of them.
struct KnobSetting {
  std::string key;  // the scenario key under `engine:`
  std::vector<std::string> values;
  bool list = false;
  std::string flag;  // the flag or variable that set it, in the engine's main spelling
};

struct ImportedCommandLine {
  const EngineTraits* engine = nullptr;
  std::string launcher;    // "vllm serve"
  std::string model;       // as given
  std::string model_flag;  // what gave it: "--model-path", or "MODEL" (vllm serve's argument)
  std::optional<std::int64_t> tp;
  std::vector<KnobSetting> knobs;  // in the order the command line first sets them
  std::vector<KnobSetting> parallel;  // the `parallel:` keys the flags set, likewise
  std::optional<std::string> allocator;  // PYTORCH_CUDA_ALLOC_CONF
  // Flags and environment variables that change neither memory nor time (names only: their values
  // may be secrets), and unmodelled flags given the value that changes nothing.
  std::vector<std::string> ignored;
  // The words as given, with the values of ignored flags and variables shown as "..." (an API key
  // or a token must not be repeated).
  std::vector<std::string> shown;
};

// InputError "<what>: ..." naming the word, the flag and what was expected; unknown flags and the
// flags that change memory in ways headroom does not model are named together, each one.
ImportedCommandLine read_engine_command_line(std::span<const std::string> words, std::string_view what);

// vLLM's human_readable_int (vllm/engine/arg_utils.py): digits with an optional k, m, g (10^3,
// 10^6, 10^9, decimals allowed: 25.6k = 25600) or K, M, G (2^10, 2^20, 2^30, whole numbers only).
std::optional<std::int64_t> human_readable_int(std::string_view text);

}  // namespace headroom::engine
