// Durations as users type them: "250ms", "10s", "1.5m", "100us", "2h", "30" (seconds).
#pragma once

#include <string>
#include <string_view>

#include "hammer/base/clock.h"
#include "hammer/base/status.h"

namespace hammer {

// Parses a non-negative duration: one or more NUMBER UNIT parts ("1m30s", "1h2m", "1.5m",
// "250ms"; units ns, us (or µs), ms, s, m, h), or a bare number of seconds ("30").
Result<Nanos> ParseDuration(std::string_view text);

// "1.25s", "250ms", "80us": a short human form.
std::string FormatDuration(Nanos d);

}  // namespace hammer
