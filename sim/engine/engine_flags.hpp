#pragma once
// An engine's command line as data: how its server is launched, every flag of its argument parser
// that headroom reads, ignores or refuses (as the engine spells it, with its aliases), and the
// environment variables it reads. Each engine fills one in its own file (<engine>_flags.cpp, with
// the parser it was checked against); engine_command_line.hpp reads a pasted command line with it.
#include <cstdint>
#include <span>
#include <string_view>

namespace headroom::engine {

// What a flag is to headroom.
enum class FlagUse {
  knob,        // sets the scenario's engine knob `target`
  model,       // the model: a catalogue name, a Hub id or a local folder holding config.json
  tp,          // the tensor-parallel size (the scenario's model.tp)
  parallel,    // sets the scenario's `parallel.<target>` (pp, dp, ep, dp_attention, custom_all_reduce); a
               // boolean `ep` flag (vLLM --enable-expert-parallel) spans every tp × dp rank
  ignored,     // changes neither memory nor time (ports, logging, API keys, ...)
  unmodelled,  // changes memory in a way headroom does not model: an error, unless its value is one of `values`
};

// How the engine's argument parser takes the flag (argparse).
enum class FlagForm {
  value,          // --flag V or --flag=V
  values,         // --flag V1 V2 ... (nargs="+")
  store_true,     // --flag
  optional_bool,  // --flag or --no-flag (BooleanOptionalAction)
};

// How headroom checks the value and writes it into the scenario.
enum class FlagValue {
  text,         // as given
  whole,        // a whole number, at least `min`
  human_whole,  // a whole number, with vLLM's human_readable_int suffixes (1k = 1000, 1K = 1024, 25.6k)
  fraction,     // a number in (0, 1]
  positive,     // a number above 0
  whole_list,   // whole numbers, each at least `min`
  boolean,      // a switch: true, or false for --no-flag
  choice,       // one of `values`: "engine=knob" pairs ("pytorch=native flashinfer=flashinfer")
};

struct EngineFlag {
  std::string_view names;  // "--tensor-parallel-size -tp": the main spelling first, then its aliases
  FlagUse use = FlagUse::ignored;
  FlagForm form = FlagForm::value;
  FlagValue value = FlagValue::text;
  std::string_view target;  // FlagUse::knob: the scenario key under `engine:`; FlagUse::parallel: under `parallel:`
  std::int64_t min = 1;     // whole numbers: the smallest the knob takes
  // FlagValue::choice: the engine's values headroom models, mapped to the knob's ("pytorch=native").
  // FlagUse::unmodelled: the values that change nothing ("1" for a parallel size, "auto" for a dtype,
  // "false" for --no-enable-lora); any other value is an error.
  std::string_view values;
  std::string_view why;  // FlagUse::unmodelled: what it changes ("quantised weights")
};

// The rows of a table, each kind with only what it needs.
constexpr EngineFlag model_flag(std::string_view names) { return {names, FlagUse::model, FlagForm::value, FlagValue::text, "", 1, "", ""}; }
constexpr EngineFlag tp_flag(std::string_view names) { return {names, FlagUse::tp, FlagForm::value, FlagValue::whole, "", 1, "", ""}; }
constexpr EngineFlag parallel_flag(std::string_view names, std::string_view key, FlagValue value,
                                   FlagForm form = FlagForm::value, std::string_view values = "") {
  return {names, FlagUse::parallel, form, value, key, 1, values, ""};
}
constexpr EngineFlag knob_flag(std::string_view names, std::string_view knob, FlagValue value,
                               FlagForm form = FlagForm::value, std::int64_t min = 1, std::string_view values = "") {
  return {names, FlagUse::knob, form, value, knob, min, values, ""};
}
constexpr EngineFlag unmodelled_flag(std::string_view names, std::string_view why, std::string_view harmless = "",
                                     FlagForm form = FlagForm::value) {
  return {names, FlagUse::unmodelled, form, FlagValue::text, "", 1, harmless, why};
}
constexpr EngineFlag ignored_flag(std::string_view names, FlagForm form = FlagForm::value) {
  return {names, FlagUse::ignored, form, FlagValue::text, "", 1, "", ""};
}

// An environment variable set before the command (`VLLM_ATTENTION_BACKEND=FLASHINFER vllm serve ...`).
struct EngineEnvVar {
  std::string_view name;
  std::string_view target;  // the knob it sets
  FlagValue value = FlagValue::text;  // text, choice, or boolean (set to anything: true)
  std::string_view values;            // FlagValue::choice, as for flags
};

struct EngineCommandLine {
  // How the server is started: "vllm serve" (its model may follow as a positional argument), or
  // "python -m <module>" (any python, python3, python3.12 or a path to one).
  std::span<const std::string_view> launchers;
  bool positional_model = false;  // the first launcher takes the model as its first argument
  std::span<const EngineFlag> flags;
  std::span<const EngineEnvVar> env;
  std::string_view parser_source;  // the argument parser the table was checked against
  std::string_view docs_anchor;    // docs/import.md's section for this engine
};

}  // namespace headroom::engine
