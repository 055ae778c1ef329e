#pragma once
// Small hand-made input files for the workload tests, written into a fresh temp folder.
#include <fstream>
#include <string>
#include <vector>

#include "sim/workload/request_source.hpp"
#include "tests/support/test_data.hpp"

namespace headroom::workload::test {

// Writes `content` to DIR/name and returns the path as a string (as it appears in messages).
inline std::string write_file(const std::string& tag, const std::string& name, const std::string& content) {
  const auto path = headroom::test::temp_dir(tag) / name;
  std::ofstream(path, std::ios::binary) << content;
  return path.string();
}

// Every request of a source, in order.
inline std::vector<Request> drain(RequestSource& source) {
  std::vector<Request> out;
  Request r;
  while (source.next(r)) out.push_back(r);
  return out;
}

// A source over a fixed list, for testing the transformations.
class ListSource final : public RequestSource {
 public:
  explicit ListSource(std::vector<Request> requests) : requests_(std::move(requests)) {}
  bool next(Request& r) override {
    if (pos_ == requests_.size()) return false;
    r = requests_[pos_++];
    ++emitted_;
    return true;
  }
  SourceStats stats() const override {
    SourceStats s;
    s.emitted = emitted_;
    return s;
  }

 private:
  std::vector<Request> requests_;
  std::size_t pos_ = 0;
  std::uint64_t emitted_ = 0;
};

}  // namespace headroom::workload::test
