#pragma once
// Makes every request fit a model's context of `context` tokens (prompt + output <= context,
// with room for at least one output token):
//  - truncate: a prompt of `context` tokens or more is cut to context - 1 tokens (keeping its
//    start, and the prefix hashes of the blocks that remain), then the output is cut to
//    context - prompt;
//  - drop: a request whose prompt leaves no room for one output token is dropped (as an engine
//    rejects a prompt longer than its maximum model length); other outputs are cut as above.
// Counted in SourceStats (input_clipped, output_clipped, dropped_too_long). Ids are renumbered.
#include <cstdint>
#include <memory>

#include "sim/workload/request_source.hpp"

namespace headroom::workload {

enum class ClipMode { truncate, drop };

class ClipToContext final : public RequestSource {
 public:
  // Throws InputError unless context >= 2.
  ClipToContext(std::unique_ptr<RequestSource> inner, Tokens context, ClipMode mode);
  bool next(Request& r) override;
  SourceStats stats() const override;

 private:
  std::unique_ptr<RequestSource> inner_;
  Tokens context_;
  ClipMode mode_;
  std::uint64_t input_clipped_ = 0, output_clipped_ = 0, dropped_ = 0, emitted_ = 0;
};

}  // namespace headroom::workload
