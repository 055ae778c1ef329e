#pragma once
// workspace_aware: size the KV cache and a workspace that grows with it together, so that both fit
// the budget the engine meant for the KV cache alone (SGLang #18263 and #36563 subtract the aiter
// workspace in the KV configurator). The workspace follows a request pool that is a clamp of the
// capacity (§2.3), so the solve has three regions: pool at its minimum, growing with the capacity,
// pool at its maximum.
#include <cstdint>

#include "sim/engine/startup.hpp"

namespace headroom::policy {

// The largest capacity t, in whole blocks of `block` tokens, with t × cell + workspace(t) ≤ budget;
// 0 when not even one block fits.
std::int64_t three_region_kv_tokens(std::int64_t budget, Bytes cell, int block, const engine::ClampedWorkspace& w);

}  // namespace headroom::policy
