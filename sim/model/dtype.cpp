#include "sim/model/dtype.hpp"

#include "sim/core/enum_names.hpp"

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

namespace {

// int32, uint8 and int64 appear in programs (indices, packed weights) but never in user input.
constexpr std::array<EnumName<DType>, 14> kDTypeNames{{
    {DType::bf16, "bf16"},
    {DType::bf16, "bfloat16", Spelling::alias},
    {DType::fp16, "fp16"},
    {DType::fp16, "float16", Spelling::alias},
    {DType::fp16, "half", Spelling::alias},
    {DType::fp32, "fp32"},
    {DType::fp32, "float32", Spelling::alias},
    {DType::fp32, "float", Spelling::alias},
    {DType::fp8, "fp8"},
    {DType::fp8, "fp8_e4m3", Spelling::alias},
    {DType::fp8, "fp8_e5m2", Spelling::alias},
    {DType::int32, "int32", Spelling::name_only},
    {DType::uint8, "uint8", Spelling::name_only},
    {DType::int64, "int64", Spelling::name_only},
}};

}  // namespace

std::string_view dtype_name(DType dtype) { return enum_name(kDTypeNames, dtype); }

DType parse_dtype(std::string_view text, std::string_view what) { return parse_enum(kDTypeNames, text, what); }

}  // namespace headroom::model
