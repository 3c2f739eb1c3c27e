// Sizes as users type them on the command line: "5242880", "512k", "5m", "1g", "256MiB"
// (powers of 1024; case-insensitive; an optional trailing "b" or "ib"). Reentrant.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "hammer/base/status.h"

namespace hammer {

// Errors: "expected a size like 5m or 1048576, got '<text>'", "unknown size unit in '<text>'",
// "size too large: '<text>'".
Result<uint64_t> ParseByteSize(std::string_view text);

// The size as ParseByteSize reads it back, in the largest unit that divides it: 268435456 ->
// "256MiB", 3072 -> "3KiB", 1536 -> "1536", 0 -> "0".
std::string FormatByteSize(uint64_t bytes);

}  // namespace hammer
