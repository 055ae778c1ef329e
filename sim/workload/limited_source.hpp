#pragma once
// The outermost source of every workload (make_source): checks each request against the limits of
// workload_limits.hpp as it passes, so that a trace or transform that yields too many requests, an
// arrival too late, or a time that is not finite ends in an InputError naming the workload before
// it reaches the simulator. Two compares per request.
#include <memory>
#include <string>

#include "sim/workload/request_source.hpp"

namespace headroom::workload {

class LimitedSource : public RequestSource {
 public:
  // `what` names the workload in errors (a trace's path, "synthetic workload"); `allow_large`
  // lifts the request and duration caps, and `allow_large_how` says how in their errors.
  LimitedSource(std::unique_ptr<RequestSource> inner, std::string what, bool allow_large,
                std::string allow_large_how = "set workload.allow_large: true");
  bool next(Request& r) override;
  SourceStats stats() const override { return inner_->stats(); }

 private:
  [[noreturn]] void refuse(const Request& r) const;
  std::unique_ptr<RequestSource> inner_;
  std::string what_;
  std::string allow_large_how_;
  std::uint64_t max_requests_;
  double max_arrival_s_;
  std::uint64_t emitted_ = 0;
};

}  // namespace headroom::workload
