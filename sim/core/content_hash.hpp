#pragma once
// FNV-1a, 64 bits: stable across machines and runs (std::hash is not). Hand-written because no
// library headroom links provides a digest (no OpenSSL); it keys results on their inputs' bytes
// (a sweep's resume, issue 14), not against an adversary.
#include <cstdint>
#include <filesystem>
#include <string_view>

namespace headroom {

inline constexpr std::uint64_t kFnv1a64Basis = 14695981039346656037ull;  // FNV-1a offset basis (Fowler–Noll–Vo)

// `h` continued over `text`.
std::uint64_t fnv1a64(std::string_view text, std::uint64_t h = kFnv1a64Basis);

// The hash of a file's bytes, read in blocks (fixed memory whatever its size). InputError naming the
// file when it is not a regular file or cannot be read; `what` names the kind of file.
std::uint64_t fnv1a64_file(const std::filesystem::path& path, std::string_view what);

}  // namespace headroom
