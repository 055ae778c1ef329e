#include "sim/engine/engine_command_line.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/core/did_you_mean.hpp"
#include "sim/core/error.hpp"
#include "sim/engine/engine_registry.hpp"

namespace headroom::engine {

namespace {

std::vector<std::string_view> split_spaces(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    const std::size_t j = std::min(s.find(' ', i), s.size());
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// "--a_b" and "--a-b" are one flag (vLLM's FlexibleArgumentParser reads both; headroom reads both
// for every engine). Single-dash aliases (-tp, -O) are compared as written.
std::string normal(std::string_view flag) {
  std::string s(flag);
  if (s.starts_with("--")) std::replace(s.begin() + 2, s.end(), '_', '-');
  return s;
}

std::string_view main_name(const EngineFlag& f) { return split_spaces(f.names).front(); }

std::string_view basename(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool is_python(std::string_view word) {
  std::string_view b = basename(word);
  if (!b.starts_with("python")) return false;
  b.remove_prefix(6);
  return b.find_first_not_of("0123456789.") == std::string_view::npos;
}

// A launcher's words against the command's: "python" stands for any python; "vllm" for a path to it.
bool launcher_matches(std::string_view launcher, std::span<const std::string> words, std::size_t at) {
  const auto lw = split_spaces(launcher);
  if (words.size() - at < lw.size()) return false;
  for (std::size_t i = 0; i < lw.size(); ++i) {
    const std::string& w = words[at + i];
    const bool ok = i == 0 ? (lw[0] == "python" ? is_python(w) : basename(w) == lw[0]) : w == lw[i];
    if (!ok) return false;
  }
  return true;
}

bool is_number(std::string_view s) {
  double d = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  return ec == std::errc() && p == s.data() + s.size();
}

bool looks_like_flag(std::string_view word) { return word.starts_with("-") && word.size() > 1 && !is_number(word); }

std::optional<std::int64_t> whole_number(std::string_view s) {
  std::int64_t v = 0;
  if (s.starts_with("+")) s.remove_prefix(1);
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<double> finite_number(std::string_view s) {
  double d = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty() || !std::isfinite(d)) return std::nullopt;
  return d;
}

// "engine=knob" pairs of a choice.
std::vector<std::pair<std::string_view, std::string_view>> choices(std::string_view values) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  for (std::string_view pair : split_spaces(values)) {
    const std::size_t eq = pair.find('=');
    out.emplace_back(pair.substr(0, eq), pair.substr(eq + 1));
  }
  return out;
}

// One value checked as `kind` and written as the knob's YAML scalar.
std::string knob_value(std::string_view what, std::string_view flag, std::string_view v, FlagValue kind,
                       std::int64_t min, std::string_view values) {
  auto fail = [&](std::string_view expected) -> std::string {
    throw InputError(fmt::format("{}: {} '{}': expected {}", what, flag, v, expected));
  };
  switch (kind) {
    case FlagValue::whole: {
      const auto n = whole_number(v);
      if (!n || *n < min) return fail(fmt::format("a whole number of at least {}", min));
      return std::to_string(*n);
    }
    case FlagValue::human_whole: {
      const auto n = human_readable_int(v);
      if (!n || *n < min) return fail(fmt::format("a whole number of at least {} (e.g. 8192, 32k, 1G)", min));
      return std::to_string(*n);
    }
    case FlagValue::fraction: {
      const auto d = finite_number(v);
      if (!d || *d <= 0 || *d > 1) return fail("a fraction in (0, 1]");
      return std::string(v);
    }
    case FlagValue::positive: {
      const auto d = finite_number(v);
      if (!d || *d <= 0) return fail("a number above 0");
      return std::string(v);
    }
    case FlagValue::choice: {
      std::vector<std::string> names;
      for (const auto& [engine_value, knob] : choices(values)) {
        if (engine_value == v) return std::string(knob);
        names.emplace_back(engine_value);
      }
      return fail(fmt::format("one of {} (the values headroom models){}", fmt::join(names, ", "),
                              did_you_mean_suffix(v, names)));
    }
    case FlagValue::boolean:
    case FlagValue::text:
    case FlagValue::whole_list:
      break;
  }
  return std::string(v);
}

bool in_list(std::string_view values, std::string_view v) {
  for (std::string_view x : split_spaces(values))
    if (x == v) return true;
  return false;
}

void set_setting(std::vector<KnobSetting>& settings, KnobSetting k) {
  for (KnobSetting& old : settings)
    if (old.key == k.key) {
      old = std::move(k);  // argparse: the last occurrence wins
      return;
    }
  settings.push_back(std::move(k));
}

void set_knob(ImportedCommandLine& out, KnobSetting k) { set_setting(out.knobs, std::move(k)); }

// The value words of the flag at `flag_at` (up to `last`), or its "=value", shown as "...".
void hide_values(std::vector<std::string>& shown, std::size_t flag_at, std::size_t last, bool inline_value) {
  if (inline_value) shown[flag_at] = shown[flag_at].substr(0, shown[flag_at].find('=') + 1) + "...";
  for (std::size_t k = flag_at + 1; k <= last; ++k) shown[k] = "...";
}

void note_ignored(ImportedCommandLine& out, std::string name) {
  if (std::find(out.ignored.begin(), out.ignored.end(), name) == out.ignored.end()) out.ignored.push_back(std::move(name));
}

std::string launchers_list() {
  std::vector<std::string> all;
  for (const EngineTraits* e : engines())
    for (std::string_view l : e->command_line().launchers) all.emplace_back(l);
  return fmt::format("{}", fmt::join(all, ", "));
}

}  // namespace

std::optional<std::int64_t> human_readable_int(std::string_view text) {
  if (text.empty()) return std::nullopt;
  const char suffix = text.back();
  std::int64_t mult = 1;
  bool binary = false;
  switch (suffix) {
    case 'k': mult = 1000; break;
    case 'm': mult = 1000000; break;
    case 'g': mult = 1000000000; break;
    case 'K': mult = 1LL << 10, binary = true; break;
    case 'M': mult = 1LL << 20, binary = true; break;
    case 'G': mult = 1LL << 30, binary = true; break;
    default: break;
  }
  if (mult == 1) {
    if (text.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    return whole_number(text);
  }
  std::string_view number = text.substr(0, text.size() - 1);
  const std::size_t dot = number.find('.');
  const std::string_view whole = number.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? std::string_view{} : number.substr(dot + 1);
  if (whole.empty() || whole.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  if (dot != std::string_view::npos && (binary || frac.empty() || frac.find_first_not_of("0123456789") != std::string_view::npos))
    return std::nullopt;  // vLLM: "Decimals are not allowed with binary suffixes"
  const auto w = whole_number(whole);
  if (!w || *w > INT64_MAX / mult) return std::nullopt;
  std::int64_t value = *w * mult;
  // The decimal part, truncated as vLLM's int(float(number) * mult) does for exact decimals.
  std::int64_t scale = mult;
  for (char c : frac) {
    if (scale == 1) break;
    scale /= 10;
    value += (c - '0') * scale;
  }
  return value;
}

ImportedCommandLine read_engine_command_line(std::span<const std::string> words, std::string_view what) {
  ImportedCommandLine out;
  if (words.empty())
    throw InputError(fmt::format("{}: empty; expected a server command line ({})", what, launchers_list()));
  // VAR=value words before the program.
  std::vector<std::pair<std::string, std::string>> env;
  std::size_t at = 0;
  for (; at < words.size(); ++at) {
    const std::string& w = words[at];
    const std::size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0 ||
        w.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") < eq ||
        (w[0] >= '0' && w[0] <= '9'))
      break;
    env.emplace_back(w.substr(0, eq), w.substr(eq + 1));
  }
  bool positional_model = false;
  for (const EngineTraits* e : engines()) {
    const EngineCommandLine& c = e->command_line();
    for (std::size_t i = 0; i < c.launchers.size() && !out.engine; ++i)
      if (launcher_matches(c.launchers[i], words, at)) {
        out.engine = e;
        out.launcher = std::string(c.launchers[i]);
        positional_model = c.positional_model && i == 0;
        at += split_spaces(c.launchers[i]).size();
      }
    if (out.engine) break;
  }
  if (!out.engine) {
    std::string start = at < words.size() ? words[at] : "";
    if (at + 1 < words.size()) start += " " + words[at + 1];
    if (at + 2 < words.size() && words[at + 1] == "-m") start += " " + words[at + 2];
    throw InputError(fmt::format("{}: '{}' does not start a server headroom models; expected one of: {}", what,
                                 start, launchers_list()));
  }
  const EngineCommandLine& spec = out.engine->command_line();
  out.shown.assign(words.begin(), words.end());

  // Every spelling of every flag, normalised; "--no-x" for a BooleanOptionalAction.
  std::map<std::string, std::pair<const EngineFlag*, bool>> by_name;  // → (flag, negated)
  std::vector<std::string> all_names;
  for (const EngineFlag& f : spec.flags)
    for (std::string_view n : split_spaces(f.names)) {
      by_name[normal(n)] = {&f, false};
      all_names.emplace_back(n);
      if (f.form == FlagForm::optional_bool && n.starts_with("--")) by_name[normal("--no-" + std::string(n.substr(2)))] = {&f, true};
    }

  std::vector<std::string> unknown, unmodelled;
  for (std::size_t i = at; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (!looks_like_flag(w)) {
      if (positional_model && out.model.empty()) {
        out.model = w, out.model_flag = "MODEL";
        continue;
      }
      throw InputError(fmt::format("{}: unexpected argument '{}'{} (a value with spaces needs quotes)", what, w,
                                   i > at ? fmt::format(" after '{}'", words[i - 1]) : ""));
    }
    std::string name = w;
    std::optional<std::string> inline_value;
    if (w.starts_with("--")) {
      const std::size_t eq = w.find('=');
      if (eq != std::string::npos) name = w.substr(0, eq), inline_value = w.substr(eq + 1);
    }
    auto found = by_name.find(normal(name));
    if (found == by_name.end() && !w.starts_with("--")) {
      // A single-dash alias with its value attached (-O3, -tp2), as argparse allows.
      for (const auto& [n, entry] : by_name)
        if (!n.starts_with("--") && w.starts_with(n) && entry.first->form == FlagForm::value &&
            (found == by_name.end() || n.size() > found->first.size()))
          found = by_name.find(n);
      if (found != by_name.end()) name = found->first, inline_value = w.substr(found->first.size());
    }
    if (found == by_name.end()) {
      const auto near = did_you_mean(name, all_names);
      unknown.push_back(near ? fmt::format("{} (did you mean {}?)", name, *near) : name);
      if (!inline_value && i + 1 < words.size() && !looks_like_flag(words[i + 1])) ++i;  // its value, presumably
      continue;
    }
    const EngineFlag& f = *found->second.first;
    const bool negated = found->second.second;
    const std::size_t flag_at = i;
    const std::string flag(main_name(f));
    std::vector<std::string> values;
    switch (f.form) {
      case FlagForm::store_true:
      case FlagForm::optional_bool:
        if (inline_value)
          throw InputError(fmt::format("{}: {} takes no value, got '{}'{}", what, name, *inline_value,
                                       f.form == FlagForm::optional_bool
                                           ? fmt::format(" (write {} or --no-{})", flag, flag.substr(2))
                                           : ""));
        values.push_back(negated ? "false" : "true");
        break;
      case FlagForm::value:
        if (inline_value) values.push_back(*inline_value);
        else if (i + 1 < words.size() && !looks_like_flag(words[i + 1])) values.push_back(words[++i]);
        break;
      case FlagForm::values:
        if (inline_value) values.push_back(*inline_value);
        else
          while (i + 1 < words.size() && !looks_like_flag(words[i + 1])) values.push_back(words[++i]);
        break;
    }
    if (values.empty() && f.use != FlagUse::ignored)
      throw InputError(fmt::format("{}: {} expects a value{}", what, name,
                                   i + 1 < words.size() ? fmt::format(", got '{}'", words[i + 1]) : ", got none"));
    switch (f.use) {
      case FlagUse::model:
        out.model = values.front(), out.model_flag = flag;
        break;
      case FlagUse::tp:
        out.tp = std::stoll(knob_value(what, flag, values.front(), FlagValue::whole, 1, ""));
        break;
      case FlagUse::parallel:
        set_setting(out.parallel, KnobSetting{std::string(f.target),
                                              {knob_value(what, flag, values.front(), f.value, f.min, f.values)},
                                              false,
                                              flag});
        break;
      case FlagUse::knob: {
        KnobSetting k{std::string(f.target), {}, f.form == FlagForm::values, flag};
        const FlagValue each = f.value == FlagValue::whole_list ? FlagValue::whole : f.value;
        for (const std::string& v : values) k.values.push_back(knob_value(what, flag, v, each, f.min, f.values));
        set_knob(out, std::move(k));
        break;
      }
      case FlagUse::ignored:
        note_ignored(out, flag);
        hide_values(out.shown, flag_at, i, inline_value.has_value());
        break;
      case FlagUse::unmodelled:
        if (values.size() == 1 && in_list(f.values, values.front())) {
          note_ignored(out, flag);
        } else {
          const std::string entry = fmt::format("{} ({})", flag, f.why);
          if (std::find(unmodelled.begin(), unmodelled.end(), entry) == unmodelled.end()) unmodelled.push_back(entry);
        }
        break;
    }
  }

  for (const auto& [name, value] : env) {
    if (name == "PYTORCH_CUDA_ALLOC_CONF") {
      out.allocator = value;
      continue;
    }
    const std::string& var = name;  // clang 14 does not let a lambda capture a structured binding
    const auto e = std::find_if(spec.env.begin(), spec.env.end(), [&](const EngineEnvVar& v) { return v.name == var; });
    if (e == spec.env.end()) {
      note_ignored(out, name);
      for (std::string& w : out.shown)
        if (w.starts_with(name + "=")) w = name + "=...";
      continue;
    }
    KnobSetting k{std::string(e->target), {}, false, name};
    k.values.push_back(e->value == FlagValue::boolean ? "true"
                                                      : knob_value(what, name, value, e->value, 1, e->values));
    set_knob(out, std::move(k));
  }

  std::vector<std::string> problems;
  if (!unknown.empty())
    problems.push_back(fmt::format("{} {} not {} of {} as {} defines them", fmt::join(unknown, ", "),
                                   unknown.size() == 1 ? "is" : "are", unknown.size() == 1 ? "a flag" : "flags",
                                   out.launcher, spec.parser_source));
  if (!unmodelled.empty())
    problems.push_back(fmt::format("{} {} memory in ways headroom does not model; remove {} to simulate the rest ({})",
                                   fmt::join(unmodelled, ", "), unmodelled.size() == 1 ? "changes" : "change",
                                   unmodelled.size() == 1 ? "it" : "them", spec.docs_anchor));
  if (!problems.empty()) throw InputError(fmt::format("{}: {}", what, fmt::join(problems, "; ")));
  if (out.model.empty()) {
    const std::string model_flag(main_name(spec.flags.front()));
    throw InputError(fmt::format("{}: no model; give {} {}", what,
                                 positional_model ? out.launcher + " MODEL or" : out.launcher, model_flag + " MODEL"));
  }
  return out;
}

}  // namespace headroom::engine
