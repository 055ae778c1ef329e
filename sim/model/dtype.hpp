#pragma once
// Element types of weights and KV caches, and their sizes.
#include <string>
#include <string_view>

#include "sim/core/units.hpp"

namespace headroom::model {

// int32 and uint8 hold packed quantized weights (GPTQ/AWQ int4 eight to an int32; fp4 two to a
// byte) and e8m0 scales, int64 compressed-tensors' weight_shape; they are never an activation or KV
// type, and parse_dtype does not read them.
enum class DType { bf16, fp16, fp32, fp8, int32, uint8, int64 };

// Bytes per element: bf16/fp16 2, fp32 4, fp8 (e4m3 or e5m2) 1, int32 4, uint8 1, int64 8.
Bytes dtype_bytes(DType dtype);

// "bf16", "fp16", "fp32", "fp8", "int32", "uint8", "int64".
std::string_view dtype_name(DType dtype);

// Accepts the short names above and PyTorch's spellings (bfloat16, float16, half, float32, float,
// fp8_e4m3, fp8_e5m2). Throws InputError "<what>: expected ..., got '<text>'".
DType parse_dtype(std::string_view text, std::string_view what);

}  // namespace headroom::model
