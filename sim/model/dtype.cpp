#include "sim/model/dtype.hpp"

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace headroom::model {

Bytes dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::bf16:
    case DType::fp16: return 2;
    case DType::fp32:
    case DType::int32: return 4;
    case DType::fp8:
    case DType::uint8: return 1;
    case DType::int64: return 8;
  }
  return 0;
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::bf16: return "bf16";
    case DType::fp16: return "fp16";
    case DType::fp32: return "fp32";
    case DType::fp8: return "fp8";
    case DType::int32: return "int32";
    case DType::uint8: return "uint8";
    case DType::int64: return "int64";
  }
  return "?";
}

DType parse_dtype(std::string_view text, std::string_view what) {
  if (text == "bf16" || text == "bfloat16") return DType::bf16;
  if (text == "fp16" || text == "float16" || text == "half") return DType::fp16;
  if (text == "fp32" || text == "float32" || text == "float") return DType::fp32;
  if (text == "fp8" || text == "fp8_e4m3" || text == "fp8_e5m2") return DType::fp8;
  throw InputError(fmt::format("{}: expected one of bf16, fp16, fp32, fp8, got '{}'", what, text));
}

}  // namespace headroom::model
