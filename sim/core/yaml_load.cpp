#include "sim/core/yaml_load.hpp"

#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include "sim/core/error.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/out_of_memory.hpp"
#include "sim/core/text_file.hpp"

namespace headroom {

namespace {

// Counts nodes and depth; throws InputError at the first node past a limit.
class Guard : public YAML::EventHandler {
 public:
  explicit Guard(const std::string& file) : file_(file) {}
  YAML::Mark document_start;

  void OnDocumentStart(const YAML::Mark& mark) override { document_start = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override { node(mark); }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    open(mark);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    open(mark);
  }
  void OnMapEnd() override { --depth_; }

 private:
  std::string where(const YAML::Mark& m) const { return fmt::format("{}:{}:{}", file_, m.line + 1, m.column + 1); }
  void node(const YAML::Mark& mark) {
    if (++nodes_ > limits::kMaxYamlNodes)
      throw InputError(fmt::format("{}: more than {} YAML nodes (values, lists and mappings), above the limit for one "
                                   "file (docs/limits.md)",
                                   where(mark), limits::kMaxYamlNodes));
  }
  void open(const YAML::Mark& mark) {
    node(mark);
    if (++depth_ > limits::kMaxYamlDepth)
      throw InputError(fmt::format("{}: lists and mappings nested more than {} deep, above the limit (docs/limits.md)",
                                   where(mark), limits::kMaxYamlDepth));
  }
  const std::string& file_;
  std::size_t nodes_ = 0;
  int depth_ = 0;
};

[[noreturn]] void not_yaml(const std::string& file, const YAML::Exception& e) {
  throw InputError(fmt::format("{}:{}:{}: not valid YAML: {}", file, e.mark.line + 1, e.mark.column + 1, e.msg));
}

}  // namespace

YAML::Node load_yaml(std::string_view text, const std::string& file) {
  if (text.size() > limits::kMaxTextFileBytes) throw_too_large(file, "YAML text", text.size(), limits::kMaxTextFileBytes);
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    Guard guard(file);
    if (parser.HandleNextDocument(guard) && parser.HandleNextDocument(guard)) {
      const YAML::Mark& m = guard.document_start;
      throw InputError(fmt::format("{}:{}:{}: a second YAML document (after a '---' line); expected one document per "
                                   "file",
                                   file, m.line + 1, m.column + 1));
    }
    return while_doing(fmt::format("parsing the YAML of {}", file), [&] { return YAML::Load(std::string(text)); });
  } catch (const YAML::Exception& e) {
    not_yaml(file, e);
  }
}

}  // namespace headroom
