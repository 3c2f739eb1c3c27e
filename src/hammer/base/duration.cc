#include "hammer/base/duration.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace hammer {

Result<Nanos> ParseDuration(std::string_view text) {
  std::string_view number = text;
  std::string_view unit;
  size_t split = text.find_first_not_of("0123456789.eE+-");
  if (split != std::string_view::npos) {
    number = text.substr(0, split);
    unit = text.substr(split);
  }
  double value = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() ||
      !std::isfinite(value) || value < 0) {
    return Status::Error("invalid duration '" + std::string(text) +
                         "' (examples: 250ms, 10s, 1.5m)");
  }
  double scale;
  if (unit.empty() || unit == "s") {
    scale = kSecond;
  } else if (unit == "ms") {
    scale = kMillisecond;
  } else if (unit == "us" || unit == "\xC2\xB5s") {
    scale = kMicrosecond;
  } else if (unit == "ns") {
    scale = 1;
  } else if (unit == "m" || unit == "min") {
    scale = 60.0 * kSecond;
  } else if (unit == "h") {
    scale = 3600.0 * kSecond;
  } else {
    return Status::Error("invalid duration unit in '" + std::string(text) +
                         "' (use ns, us, ms, s, m or h)");
  }
  double nanos = value * scale;
  if (nanos > 9.0e18) return Status::Error("duration too long: '" + std::string(text) + "'");
  return static_cast<Nanos>(std::llround(nanos));
}

std::string FormatDuration(Nanos d) {
  // %.3g prints values that round to 1000 or more as "1e+03": such values move up a unit, and
  // seconds from 999.5 on are printed whole.
  const double v = static_cast<double>(d);
  char buf[32];
  if (v >= 999.5 * kSecond) {
    std::snprintf(buf, sizeof(buf), "%.0fs", v / kSecond);
  } else if (v >= 999.5 * kMillisecond) {
    std::snprintf(buf, sizeof(buf), "%.3gs", v / kSecond);
  } else if (v >= 999.5 * kMicrosecond) {
    std::snprintf(buf, sizeof(buf), "%.3gms", v / kMillisecond);
  } else {
    std::snprintf(buf, sizeof(buf), "%.3gus", v / kMicrosecond);
  }
  return buf;
}

}  // namespace hammer
