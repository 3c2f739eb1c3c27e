// Sizes as users type them on the command line: "5242880", "512k", "5m", "1g", "256MiB"
// (powers of 1024; case-insensitive; an optional trailing "b" or "ib"). Reentrant.
#pragma once

#include <cstdint>
#include <string_view>

#include "hammer/base/status.h"

namespace hammer {

// Errors: "expected a size like 5m or 1048576, got '<text>'", "unknown size unit in '<text>'",
// "size too large: '<text>'".
Result<uint64_t> ParseByteSize(std::string_view text);

}  // namespace hammer
