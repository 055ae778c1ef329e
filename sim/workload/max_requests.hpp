#pragma once
// Ends the workload after its first `limit` requests (the rest of the source is not read).
#include <cstdint>
#include <memory>

#include "sim/workload/request_source.hpp"

namespace headroom::workload {

class MaxRequests final : public RequestSource {
 public:
  MaxRequests(std::unique_ptr<RequestSource> inner, std::uint64_t limit);
  bool next(Request& r) override;
  SourceStats stats() const override;

 private:
  std::unique_ptr<RequestSource> inner_;
  std::uint64_t limit_, emitted_ = 0;
};

}  // namespace headroom::workload
