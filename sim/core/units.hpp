#pragma once
// Byte and time units shared by every layer.
#include <cstdint>
#include <string>
#include <string_view>

namespace headroom {

using Bytes = std::uint64_t;    // sizes and addresses on the device
using Address = std::uint64_t;  // device virtual address
using StreamId = std::uint64_t; // cudaStream_t value compared as an integer (PyTorch does the same)
using Seconds = double;

inline constexpr Bytes KiB = Bytes{1} << 10;
inline constexpr Bytes MiB = Bytes{1} << 20;
inline constexpr Bytes GiB = Bytes{1} << 30;

constexpr Bytes round_up(Bytes n, Bytes multiple) { return (n + multiple - 1) / multiple * multiple; }

// PyTorch's OOM-message size format (c10 format_size): <=1024 "N bytes", then KiB, MiB, GiB,
// always with two decimals.
std::string format_size(Bytes n);

// Human-readable binary size for reports: "15.00 GiB", "512 B".
std::string format_bytes(Bytes n);

// Parses "24GiB", "80GB", "512MiB", "1.5 GiB", "4096" (bytes). Throws InputError naming `what`.
Bytes parse_bytes(std::string_view text, std::string_view what);

}  // namespace headroom
