// The bad-input corpus (tests/bad_inputs/cases.yaml, issue 8): every broken input, run through the
// headroom binary under a timeout, must end with its expected exit code and message, without a
// crash and without leaving any output behind. One test per folder of the corpus.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include "tests/support/test_data.hpp"

namespace fs = std::filesystem;
using namespace headroom::test;

namespace {

const fs::path kCorpus = fs::path(HEADROOM_SOURCE_DIR) / "tests" / "bad_inputs";

const YAML::Node& manifest() {
  static const YAML::Node m = YAML::LoadFile((kCorpus / "cases.yaml").string());
  return m;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// Regular files under `dir`, as paths relative to it.
std::set<std::string> files_under(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (!e.is_directory()) out.insert(fs::relative(e.path(), dir).generic_string());
  return out;
}

// Text a crash, an abort or a sanitizer leaves; none may appear, whatever the exit code.
const std::vector<std::string> kCrashText = {"terminate called", "Sanitizer", "runtime error:", "internal error",
                                             "Segmentation fault", "Aborted", "core dumped", "Assertion"};

void run_case(const YAML::Node& c) {
  const std::string name = c["case"].as<std::string>();
  const std::string file = c["file"] ? c["file"].as<std::string>() : "";
  const std::string folder = name.substr(0, name.find('/'));
  const std::string kind = c["kind"] ? c["kind"].as<std::string>() : folder;
  if (c["not_root"] && c["not_root"].as<bool>() && ::geteuid() == 0) return;  // root writes anywhere
  const fs::path out = temp_dir("bad-out"), scratch = temp_dir("bad-scratch"), readonly = temp_dir("bad-readonly");
  fs::permissions(readonly, fs::perms::owner_read | fs::perms::owner_exec);

  const std::string basename = fs::path(file).filename().string();
  auto fill = [&](std::string s) {
    s = replace_all(s, "{corpus}", kCorpus.string());
    s = replace_all(s, "{file}", (kCorpus / file).string());
    s = replace_all(s, "{basename}", basename);
    s = replace_all(s, "{stem}", basename.substr(0, basename.find('.')));
    s = replace_all(s, "{out}", out.string());
    s = replace_all(s, "{scratch}", scratch.string());
    return replace_all(s, "{readonly}", readonly.string());
  };
  // "@PATH" is a copy of a file (relative to the corpus, or absolute); anything else is the text.
  auto materialise = [&](const fs::path& dir, const YAML::Node& files) {
    for (const auto& kv : files) {
      const fs::path to = dir / fill(kv.first.as<std::string>());
      const std::string value = fill(kv.second.as<std::string>());
      if (value.starts_with("@")) fs::copy_file(kCorpus / value.substr(1), to);
      else write(to, value);
    }
  };
  if (const YAML::Node s = manifest()["scratch_files"][kind]) materialise(scratch, s);
  if (const YAML::Node s = c["files"]) materialise(scratch, s);
  // Named pipes (issue 14): an input that is a FIFO must be refused, not block its reader.
  if (const YAML::Node f = c["fifos"])
    for (const auto& n : f) REQUIRE(::mkfifo((scratch / fill(n.as<std::string>())).c_str(), 0644) == 0);
  std::map<std::string, std::string> placed;  // what the case put into its output folder
  if (const YAML::Node copies = c["copy_to_out"]) {
    materialise(out, copies);
    for (const std::string& f : files_under(out)) placed[f] = slurp(out / f);
  }

  const std::string args =
      fill(c["args"] ? c["args"].as<std::string>() : manifest()["commands"][kind].as<std::string>());
  const CommandResult r = run_shell("timeout -k 5 60 " + q(headroom_binary()) + " " + args);
  INFO("case " << name << ": headroom " << args << "\n" << r.output);
  CHECK(r.exit_code != 124);  // the timeout's: a hang
  CHECK(r.exit_code == (c["exit"] ? c["exit"].as<int>() : 2));
  for (const auto& e : c["expect"]) CHECK_THAT(r.output, Catch::Contains(e.as<std::string>()));
  if (!file.empty() && !(c["names_file"] && !c["names_file"].as<bool>())) CHECK_THAT(r.output, Catch::Contains(basename));
  for (const std::string& crash : kCrashText) CHECK_THAT(r.output, !Catch::Contains(crash));
  // No partial output: the output folder holds exactly what the case put there, unchanged.
  std::map<std::string, std::string> after;
  for (const std::string& f : files_under(out)) after[f] = slurp(out / f);
  CHECK(after == placed);

  fs::permissions(readonly, fs::perms::owner_all);
  for (const fs::path& d : {out, scratch, readonly}) fs::remove_all(d);
}

void run_folder(const std::string& folder) {
  std::size_t cases = 0;
  for (const auto& c : manifest()["cases"]) {
    const std::string name = c["case"].as<std::string>();
    if (name.substr(0, name.find('/')) != folder) continue;
    ++cases;
    run_case(c);
  }
  CHECK(cases > 0);
}

}  // namespace

TEST_CASE("bad input corpus: scenario YAML") { run_folder("scenario"); }
TEST_CASE("bad input corpus: trace files") { run_folder("trace"); }
TEST_CASE("bad input corpus: GPU profiles") { run_folder("profile"); }
TEST_CASE("bad input corpus: HF config.json") { run_folder("hfconfig"); }
TEST_CASE("bad input corpus: snapshots") { run_folder("snapshot"); }
TEST_CASE("bad input corpus: PYTORCH_CUDA_ALLOC_CONF") { run_folder("allocconf"); }
TEST_CASE("bad input corpus: sweep grids") { run_folder("grid"); }
TEST_CASE("bad input corpus: calibration measurements") { run_folder("measurements"); }
TEST_CASE("bad input corpus: recorded-step descriptions") { run_folder("recorded_step"); }
TEST_CASE("bad input corpus: policy lists") { run_folder("policies"); }
TEST_CASE("bad input corpus: command-line flags") { run_folder("flags"); }
TEST_CASE("bad input corpus: unwritable outputs") { run_folder("output"); }
TEST_CASE("bad input corpus: saved outputs headroom report redraws") { run_folder("report"); }

TEST_CASE("bad input corpus: every file has a case and every class of issue 8 is covered") {
  std::set<std::string> folders = {"scenario", "trace", "profile", "hfconfig", "snapshot", "allocconf", "grid",
                                   "measurements", "recorded_step", "policies", "flags", "output", "report"};
  std::set<std::string> used = {"cases.yaml"}, problems, names;
  for (const auto& c : manifest()["cases"]) {
    const std::string name = c["case"].as<std::string>();
    CHECK(names.insert(name).second);  // case names are unique
    CHECK(folders.count(name.substr(0, name.find('/'))) == 1);
    problems.insert(c["problem"].as<std::string>());
    if (c["file"]) used.insert(c["file"].as<std::string>());
    if (c["copy_to_out"])
      for (const auto& kv : c["copy_to_out"]) used.insert(kv.second.as<std::string>().substr(1));
  }
  // Every file of the corpus is some case's input (support/ holds the valid inputs cases start from).
  for (const std::string& f : files_under(kCorpus))
    if (!f.starts_with("support/")) CHECK(used.count(f) == 1);
  for (const char* p : {"truncated", "wrong_type", "negative", "huge", "nan_inf", "empty", "encoding", "unsorted",
                        "unknown_key", "missing_file", "directory", "unwritable_output", "output_is_file"})
    CHECK(problems.count(p) == 1);
}
