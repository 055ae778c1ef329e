#include "sim/workload/clip_to_context.hpp"

#include <string>

#include "sim/core/error.hpp"

namespace headroom::workload {

ClipToContext::ClipToContext(std::unique_ptr<RequestSource> inner, Tokens context, ClipMode mode)
    : inner_(std::move(inner)), context_(context), mode_(mode) {
  if (context < 2)
    throw InputError("clip: context must be at least 2 tokens (one prompt, one output), got " + std::to_string(context));
}

bool ClipToContext::next(Request& r) {
  while (inner_->next(r)) {
    if (r.input_tokens >= context_) {
      if (mode_ == ClipMode::drop) {
        ++dropped_;
        continue;
      }
      r.input_tokens = context_ - 1;
      if (r.prefix_block_tokens > 0) {
        const auto blocks = static_cast<std::size_t>((r.input_tokens + r.prefix_block_tokens - 1) / r.prefix_block_tokens);
        if (r.prefix_hashes.size() > blocks) r.prefix_hashes.resize(blocks);
      }
      ++input_clipped_;
    }
    if (r.input_tokens + r.output_tokens > context_) {
      r.output_tokens = context_ - r.input_tokens;
      ++output_clipped_;
    }
    r.id = emitted_++;
    return true;
  }
  return false;
}

SourceStats ClipToContext::stats() const {
  SourceStats s = inner_->stats();
  s.input_clipped += input_clipped_;
  s.output_clipped += output_clipped_;
  s.dropped_too_long += dropped_;
  s.emitted = emitted_;
  return s;
}

}  // namespace headroom::workload
